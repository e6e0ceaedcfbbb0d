package serverset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/sweep"
)

// --server-set takes one NAME=VALUES per setting: a list or a range
// makes an axis named server.NAME, a single value is set for every cell,
// and the flag is written back as it was given, one per setting.
func TestFlag(t *testing.T) {
	var f Flag
	for _, s := range []string{"work_mem=4MB,64MB", "synchronous_commit=off", "innodb_io_capacity=200:1000:400"} {
		if err := f.Set(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	want := []sweep.Axis{{Name: "server.work_mem", Values: []string{"4MB", "64MB"}}, {Name: "server.innodb_io_capacity", Values: []string{"200", "600", "1000"}}}
	if got := f.Axes(); !reflect.DeepEqual(got, want) {
		t.Errorf("axes %v, want %v", got, want)
	}
	if got := f.Args(); !reflect.DeepEqual(got, []string{"work_mem=4MB,64MB", "synchronous_commit=off", "innodb_io_capacity=200,600,1000"}) {
		t.Errorf("args %v", got)
	}
	if _, err := f.Run(); err == nil {
		t.Error("a run of a flag with lists was given values")
	}
	if !f.Pin("server.work_mem", "64MB") || !f.Pin("server.innodb_io_capacity", "600") || f.Pin("threads", "2") || f.Pin("server.other", "1") {
		t.Fatal("Pin took the wrong options")
	}
	got, err := f.Run()
	if err != nil || !reflect.DeepEqual(got, []Want{{"work_mem", "64MB"}, {"synchronous_commit", "off"}, {"innodb_io_capacity", "600"}}) {
		t.Errorf("run %v, %v", got, err)
	}
	for s, why := range map[string]string{
		"work_mem":              "NAME=VALUE",
		"=4MB":                  "NAME=VALUE",
		"work_mem=":             "NAME=VALUE",
		"work mem=1":            "not a setting's name",
		"x;drop table t=1":      "not a setting's name",
		"work_mem=1,,2":         "empty value",
		"synchronous_commit=on": "given twice",
	} {
		if err := f.Set(s); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", s, err, why)
		}
	}
}
