//go:build !linux

package transport

import (
	"errors"
	"net"
)

// FromNet refuses: the blocking transport waits in Linux's ppoll on
// Linux's eventfds.
func FromNet(nc net.Conn) (net.Conn, error) {
	nc.Close()
	return nil, errors.New("blocking transport: Linux only")
}
