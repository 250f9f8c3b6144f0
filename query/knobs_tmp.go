package query

import (
	"os"
	"strconv"
	"strings"
)

var knob = func() map[string]float64 {
	m := map[string]float64{}
	for _, kv := range strings.Split(os.Getenv("TYCHORA_KNOBS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			f, _ := strconv.ParseFloat(v, 64)
			m[k] = f
		}
	}
	return m
}()

func kn(name string, def float64) float64 {
	if v, ok := knob[name]; ok {
		return v
	}
	return def
}
