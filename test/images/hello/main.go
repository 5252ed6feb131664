// Command hello is the e2e tests' web server: it answers every request with the name of the
// pod it runs in, so a test can tell which backend of a Service answered.
package main

import (
	"net/http"
	"os"
)

func main() {
	name, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) })
	if err := http.ListenAndServe(":8080", nil); err != nil {
		os.Exit(1)
	}
}
