//go:build !linux

package runner

import "context"

// newAlarm returns a client's alarm: a Go timer on this system.
func newAlarm(context.Context) alarm { return newTimerAlarm() }
