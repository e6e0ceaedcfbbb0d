package htmlreport

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLibraryMissingSaysHowToGetIt(t *testing.T) {
	placeholder := fstest.MapFS{"assets/README.txt": {Data: []byte("placeholder")}}
	_, err := library(placeholder)
	if !errors.Is(err, ErrNoChartLibrary) || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("library without the file: %v", err)
	}
	lib := fstest.MapFS{libraryPath: {Data: []byte("var echarts;")}}
	if b, err := library(lib); err != nil || string(b) != "var echarts;" {
		t.Fatalf("library: %q, %v", b, err)
	}
}

func TestScriptSafe(t *testing.T) {
	if got := scriptSafe([]byte(`a="</script>";b="</SCRIPT"`)); got != `a="<\/script>";b="<\/SCRIPT"` {
		t.Fatalf("scriptSafe: %s", got)
	}
}
