// goprof.go — writes a CPU profile (with pprof labels) and a heap profile
// (four sample types) with Go's runtime/pprof, for tests/oracle/pprof.sh:
//     go run goprof.go cpu.pprof heap.pprof
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
)

var sink int

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

//go:noinline
func parse(n int) int { return spin(n) }

//go:noinline
func render(n int) int { return spin(n/2) + spin(n/2) }

var keep [][]byte

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

//go:noinline
func allocBig(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<16)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
}

func main() {
	runtime.MemProfileRate = 1
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	for j := 0; j < 40; j++ {
		pprof.Do(context.Background(), pprof.Labels("phase", "parse"), func(context.Context) {
			sink += parse(2000000)
		})
		pprof.Do(context.Background(), pprof.Labels("phase", "render"), func(context.Context) {
			sink += render(2000000)
		})
	}
	pprof.StopCPUProfile()
	f.Close()

	allocSmall(5000)
	allocBig(40)
	runtime.GC()
	h, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(h, 0); err != nil {
		panic(err)
	}
	h.Close()
	if sink == 42 {
		println(len(keep))
	}
}
