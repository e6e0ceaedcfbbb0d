package result

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestClientCPU(t *testing.T) {
	if NewClientCPU(time.Second, 0, 0, 10, 2) != nil || NewClientCPU(time.Second, 0, 1, 10, 0) != nil {
		t.Fatal("an empty window or no CPUs made a figure")
	}
	// 1.5 s of 4 CPUs over 2 s and 1000 events.
	c := NewClientCPU(time.Second, 500*time.Millisecond, 2, 1000, 4)
	if c.PerEventUS != 1500 || c.MachineShare != 0.1875 || c.CPUs != 4 {
		t.Fatalf("%+v", c)
	}
	for _, tc := range []struct {
		share            float64
		shared, embedded bool
		limited          bool
	}{
		{0.5, true, false, true},   // a server on this machine, half of it taken
		{0.5, false, false, false}, // the server elsewhere: the client's machine is its own
		{0.5, false, true, false},  // embedded: the engine's work is the process's own
		{0.39, true, false, false}, // under the threshold
	} {
		c := &ClientCPU{MachineShare: tc.share, PerEventUS: 20, CPUs: 2}
		c.Judge(tc.shared, tc.embedded)
		note := c.LimitedNote()
		if c.Limited != tc.limited || (note != "") != tc.limited {
			t.Errorf("share %.2f shared %v embedded %v: limited %v, note %q", tc.share, tc.shared, tc.embedded, c.Limited, note)
		}
		if c.SharedMachine != (tc.shared || tc.embedded) || c.IncludesEngine != tc.embedded {
			t.Errorf("share %.2f shared %v embedded %v: %+v", tc.share, tc.shared, tc.embedded, c)
		}
		if tc.limited && !(strings.Contains(note, "50% of this machine's 2 CPUs") && strings.Contains(note, "another machine") && strings.Contains(note, "fewer clients")) {
			t.Errorf("the note does not say how much, nor what to do: %q", note)
		}
	}
	var none *ClientCPU
	if none.LimitedNote() != "" {
		t.Error("a result without the figure has a note")
	}
	// A document written before the figure was recorded reads without one.
	var s Summary
	if err := json.Unmarshal([]byte(`{"events": 3}`), &s); err != nil || s.Client != nil {
		t.Fatalf("%v %+v", err, s.Client)
	}
}
