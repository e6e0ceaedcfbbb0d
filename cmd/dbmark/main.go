// Command dbmark benchmarks databases and storage. See the README.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dbmark/dbmark/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	first, again := cli.SignalNotices(os.Args[1:])
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "\ndbmark: "+first)
		cancel()
		<-sig
		fmt.Fprintln(os.Stderr, "dbmark: "+again)
		os.Exit(cli.ExitInterrupted)
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
