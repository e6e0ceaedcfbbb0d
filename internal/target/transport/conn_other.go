//go:build !linux

package transport

import (
	"errors"
	"net"
)

// FromNet refuses: the blocking transport waits in Linux's ppoll on
// Linux's eventfds.
func FromNet(nc net.Conn) (net.Conn, error) { return fromNet(nc, nil) }

func fromNet(nc net.Conn, _ *Hold) (net.Conn, error) {
	nc.Close()
	return nil, errors.New("blocking transport: Linux only")
}

const linux = false

// pollerFromNet refuses: the poller transport's raw reads and writes are
// Linux's system calls.
func pollerFromNet(nc net.Conn) (net.Conn, error) {
	nc.Close()
	return nil, errors.New("poller transport: Linux only")
}
