package script

import (
	"strconv"
	"strings"
)

// name gives each SQL command the name a comment above it states, as the
// query workload's files label their statements: the first word, without
// a trailing colon, of the topmost line of the -- comment lines just above
// the command's first line (no blank line between). pgbench itself ignores
// comments, so a name changes nothing the script does: a name used before
// in the script, or a number (which the unnamed commands' operations
// are), is left unused and the command keeps its number.
func (s *Script) name(src string) {
	lines := strings.Split(src, "\n")
	used := map[string]bool{}
	for _, c := range s.Commands {
		if c.Kind != SQL || c.Line < 2 || c.Line > len(lines) {
			continue
		}
		label := ""
		for i := c.Line - 2; i >= 0; i-- { // lines[c.Line-1] holds the command's start
			text := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(text, "--") {
				break
			}
			if w := commentWord(text); w != "" {
				label = w
			}
		}
		if _, err := strconv.Atoi(label); label == "" || err == nil || used[label] {
			continue
		}
		used[label] = true
		c.Name = label
	}
}

// commentWord is the first word of a -- comment line, without a trailing
// colon ("" when the comment is empty).
func commentWord(comment string) string {
	f := strings.Fields(strings.TrimLeft(comment, "-"))
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(f[0], ":")
}
