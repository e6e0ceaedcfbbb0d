package htmlreport

import (
	"embed"
	"errors"
	"io/fs"
)

// The chart library is built by npm, not committed: the directory holds a
// committed placeholder so the package compiles on a fresh clone, and the
// library is there once `make assets` has run.
//
//go:embed assets
var assets embed.FS

const libraryPath = "assets/echarts.min.js"

// ErrNoChartLibrary says the binary was built before the chart library was
// fetched, and how to get it.
var ErrNoChartLibrary = errors.New("this dbmark was built without its chart library: run `make build` " +
	"(it fetches Apache ECharts with npm ci in web/ and embeds it) and use bin/dbmark")

// ChartLibrary returns the embedded chart library.
func ChartLibrary() ([]byte, error) {
	return library(assets)
}

func library(fsys fs.FS) ([]byte, error) {
	b, err := fs.ReadFile(fsys, libraryPath)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(b) == 0) {
		return nil, ErrNoChartLibrary
	}
	return b, err
}
