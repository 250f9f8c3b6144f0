package copylock
