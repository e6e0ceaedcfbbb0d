package randgen

import (
	"math/bits"
	"slices"
)

// FillTemplate appends template to dst with every '#' replaced by a random
// decimal digit and every '@' by a random lowercase ASCII letter, the
// meaning of sysbench.rand.string(template); other bytes are copied as is.
// It works on bytes, which is safe for UTF-8 templates because '#' and '@'
// never occur inside a multi-byte sequence. It allocates only when dst
// lacks capacity for len(template) more bytes.
func FillTemplate(dst []byte, template string, src *Source) []byte {
	dst = slices.Grow(dst, len(template))
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch c {
		case '#':
			c = '0' + pick(src, 10)
		case '@':
			c = 'a' + pick(src, 26)
		}
		dst = append(dst, c)
	}
	return dst
}

// pick returns a uniform value in [0, n), scaling like Source.Uniform.
func pick(src *Source, n uint64) byte {
	hi, _ := bits.Mul64(src.Uint64(), n)
	return byte(hi)
}
