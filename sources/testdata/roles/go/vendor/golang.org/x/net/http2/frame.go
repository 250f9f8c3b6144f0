package http2
