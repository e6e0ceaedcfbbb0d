package target

import (
	"database/sql/driver"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ReadLastRow reads every row of rows into row (counting them and keeping
// the last one as text) and closes rows. dest is a reused scan buffer.
// It serves the engines whose drivers hand out driver.Rows.
func ReadLastRow(rows driver.Rows, row *Row, dest *[]driver.Value) error {
	cols := rows.Columns()
	if cap(*dest) < len(cols) {
		*dest = make([]driver.Value, len(cols))
	}
	d := (*dest)[:len(cols)]
	row.Rows = 0
	for {
		err := rows.Next(d)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return err
		}
		row.Rows++
		if cap(row.Values) < len(d) {
			row.Values = make([][]byte, len(d))
		}
		row.Values = row.Values[:len(d)]
		for i, v := range d {
			row.Values[i] = appendText(row.Values[i][:0:0], v)
		}
	}
	row.Columns = append(row.Columns[:0], cols...)
	return rows.Close()
}

// appendText appends a driver value's text; NULL stays nil.
func appendText(b []byte, v driver.Value) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return append(b, x...)
	case string:
		return append(b, x...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(b, x)
	case time.Time:
		return x.AppendFormat(b, "2006-01-02 15:04:05.999999999Z07:00")
	}
	return fmt.Append(b, v)
}
