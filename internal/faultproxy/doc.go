// Package faultproxy puts faults between the crawler's processes and a
// backend for the cluster's fault tests: TCP, a proxy that forwards
// connections until told to reset them or to stop moving bytes (a server
// that is down, a network partition); HTTP, a reverse proxy that answers a
// share of the requests it is told to with 500 and delays others (an object
// store having a bad day). The tiers connect to the proxy instead of the
// backend, and the test turns the fault on and off under a running crawl.
package faultproxy
