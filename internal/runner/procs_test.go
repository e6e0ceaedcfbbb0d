package runner

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target/transport"
)

// TestSyscallProcsMatchTheTransport: auto's blocking transport serves at
// most transport.MaxHeld clients because the runner gives that many a
// processor each (and two to spare); the two bounds move together.
func TestSyscallProcsMatchTheTransport(t *testing.T) {
	if maxSyscallProcs != transport.MaxHeld+2 {
		t.Fatalf("the runner gives %d processors, the transport holds threads for up to %d clients: want %d", maxSyscallProcs, transport.MaxHeld, transport.MaxHeld+2)
	}
}
