//go:build !linux

package runner

import (
	"context"
	"time"
)

// newAlarm returns a client's alarm: a Go timer on this system.
func newAlarm(context.Context, time.Duration) alarm { return newTimerAlarm() }
