package script

import (
	"fmt"
	"strings"
)

// SyntaxError is a script that cannot be parsed. Its fields follow
// pgbench's report: the file, the line of the command, the 1-based column of
// the caret (0 when pgbench shows none), the message and the command's text.
type SyntaxError struct {
	File string
	Line int
	Col  int
	Msg  string
	Text string
}

// Error is "file:line:col: msg" (or "file:line: msg" without a column).
func (e *SyntaxError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Detail is the offending command's text and, when the column is known, a
// caret under the spot followed by "error found here", as pgbench prints.
func (e *SyntaxError) Detail() string {
	if e.Text == "" {
		return ""
	}
	if e.Col <= 0 {
		return e.Text
	}
	return e.Text + "\n" + strings.Repeat(" ", e.Col-1) + "^ error found here"
}

// RuntimeError is a command that failed while a client ran the script:
// an undefined variable, a division by zero, a bad function argument, an
// integer overflow, a failed shell command.
type RuntimeError struct {
	Script string // the script's name
	Line   int    // the command's line in the script
	Client int
	Msg    string
}

func (e *RuntimeError) Error() string {
	return fmt.Sprintf("client %d: script %s line %d: %s", e.Client, e.Script, e.Line, e.Msg)
}

// CommandError is the error that stopped a client's run of a script, with
// where it stopped as pgbench numbers it: the script's index in the run,
// the command's 0-based index, and the meta-command's name ("" for SQL).
// Its text is the error's own.
type CommandError struct {
	Client, Script, Command int
	Meta                    string
	SQL                     string // the statement's text, for SQL
	Err                     error
}

func (e *CommandError) Error() string { return e.Err.Error() }
func (e *CommandError) Unwrap() error { return e.Err }
