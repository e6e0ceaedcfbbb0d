package randgen

import "testing"

const benchRows = 10_000_000 // a large sysbench table

func benchGenerator(b *testing.B, d Dist) {
	g, err := NewGenerator(d, 1, benchRows)
	if err != nil {
		b.Fatal(err)
	}
	src := New(1, 0)
	var sink int64
	for b.Loop() {
		sink += g.Int(src)
	}
	_ = sink
}

func BenchmarkUint64(b *testing.B) {
	src := New(1, 0)
	var sink uint64
	for b.Loop() {
		sink += src.Uint64()
	}
	_ = sink
}

func BenchmarkUniform(b *testing.B) {
	src := New(1, 0)
	var sink int64
	for b.Loop() {
		sink += src.Uniform(1, benchRows)
	}
	_ = sink
}

func BenchmarkGaussian(b *testing.B) { benchGenerator(b, dist(KindGaussian)) }
func BenchmarkSpecial(b *testing.B)  { benchGenerator(b, dist(KindSpecial)) }
func BenchmarkPareto(b *testing.B)   { benchGenerator(b, dist(KindPareto)) }
func BenchmarkZipfian(b *testing.B)  { benchGenerator(b, dist(KindZipfian)) }

// BenchmarkZipfianDistInt shows the cost of not caching a Generator.
func BenchmarkZipfianDistInt(b *testing.B) {
	d := dist(KindZipfian)
	src := New(1, 0)
	var sink int64
	for b.Loop() {
		sink += d.Int(src, 1, benchRows)
	}
	_ = sink
}

func BenchmarkUnique(b *testing.B) {
	src := New(1, 0)
	var sink uint32
	for b.Loop() {
		sink += Unique(src)
	}
	_ = sink
}

func BenchmarkFillTemplate(b *testing.B) {
	src := New(1, 0)
	buf := make([]byte, 0, 128)
	// sysbench oltp's c column template (119 bytes).
	const tmpl = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	b.SetBytes(int64(len(tmpl)))
	for b.Loop() {
		buf = FillTemplate(buf[:0], tmpl, src)
	}
}
