// Command hello is the e2e tests' web server: it answers every request with the name of the
// pod it runs in, so a test can tell which backend of a Service answered.
//
//	hello            serve on :8080
//	hello get URL    fetch URL once and print the status and body (a client inside the cluster,
//	                 e.g. to show that the pod's resolver finds Services by name); exit 1 on an
//	                 error or a status other than 2xx, so it can be a Job's check
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "get" {
		if err := get(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	name, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) })
	if err := http.ListenAndServe(":8080", nil); err != nil {
		os.Exit(1)
	}
}

func get(url string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	fmt.Printf("%s %s\n", resp.Status, body)
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return err
}
