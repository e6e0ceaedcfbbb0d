package workload

import (
	"context"
	"fmt"

	"github.com/dbmark/dbmark/internal/target"
)

// A prepare marks its data set incomplete before it changes anything and
// removes the mark as its very last step, so a prepare that fails, is
// interrupted or is killed leaves data that runs refuse rather than
// measure. The mark is a table of its own, named after the data set
// (markPrefix + "sbtest"), because a table is what every engine can create
// and drop atomically; a data set prepared by another tool has no mark and
// is taken as it is.
const markPrefix = "dbmark_incomplete_"

// MarkIncomplete records that the prepare of set has begun.
func MarkIncomplete(ctx context.Context, c target.Conn, set string) error {
	if err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+markPrefix+set+" (started VARCHAR(40))"); err != nil {
		return fmt.Errorf("mark the data as being prepared: %w", err)
	}
	return nil
}

// MarkComplete records that set is whole: its prepare finished, or its
// cleanup removed it.
func MarkComplete(ctx context.Context, c target.Conn, set string) error {
	if err := c.Exec(ctx, "DROP TABLE IF EXISTS "+markPrefix+set); err != nil {
		return fmt.Errorf("mark the data as prepared: %w", err)
	}
	return nil
}

// CheckComplete returns an *IncompleteError when a prepare of set began
// and did not finish. workload names the command that prepares it.
func CheckComplete(ctx context.Context, c target.Conn, set, workload string) error {
	if _, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+markPrefix+set); err != nil {
		// No mark (the usual case: the query fails on the missing table).
		return ctx.Err()
	}
	return &IncompleteError{Workload: workload}
}

// IncompleteError says the data set's last prepare did not finish.
type IncompleteError struct{ Workload string }

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("the data was not completely prepared (an earlier prepare failed or was stopped): run dbmark cleanup %s and prepare %[1]s again with the same --target", e.Workload)
}
