package main

import "math"

// checkPrice accepts a price per million tokens: a finite number, 0 or more.
func checkPrice(name string, v float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return invalid("%s must be a price in US dollars per million tokens, 0 or more (got %v)", name, v)
	}
	return nil
}
