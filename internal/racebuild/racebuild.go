// Package racebuild says whether the binary was built with the Go race
// detector (-race). Under it every goroutine that ends leaves its share of
// the detector's history behind (about 5 KiB, plus about 100 B per
// synchronisation it made, up to 512 KiB), memory the detector never gives
// back; packages that would start a goroutine per emulated lane or actor
// for every run reuse ended ones instead when Enabled (sim's actor
// goroutines, kernel's lane coroutines).
package racebuild
