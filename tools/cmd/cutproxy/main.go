// cutproxy is a loopback TCP proxy that cuts connections on demand, for fault
// trials (tools/faults): put it in front of the kube-apiserver and point a
// client's kubeconfig at it; SIGUSR1 closes every connection open through it
// (a client sees its watches and requests end mid-stream, as when a load
// balancer or a network path drops them) and the proxy keeps accepting new ones.
// SIGUSR2 cuts the same way, then refuses new connections for --hold (the
// path stays down a while: a client's resourceVersion can age past a
// compaction meanwhile).
//
//	cutproxy --listen 127.0.0.1:0 --target 127.0.0.1:6443 [--hold 12s]
//
// It prints "listening ADDR" once it accepts, and "cut N" after each signal.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type proxy struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  time.Time // refuse connections until then
}

func (p *proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

// cut closes every open connection, both sides, and says how many.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	n := len(p.conns)
	clear(p.conns)
	return n
}

func (p *proxy) serve(client net.Conn, target string) {
	p.mu.Lock()
	down := time.Now().Before(p.down)
	p.mu.Unlock()
	if down {
		client.Close()
		return
	}
	server, err := net.Dial("tcp", target)
	if err != nil {
		client.Close()
		return
	}
	p.track(client, true)
	p.track(server, true)
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	wg.Add(2)
	go pipe(server, client)
	go pipe(client, server)
	wg.Wait()
	p.track(client, false)
	p.track(server, false)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept connections on")
	target := flag.String("target", "", "address to forward them to (host:port)")
	hold := flag.Duration("hold", 12*time.Second, "how long SIGUSR2 keeps the path down after its cut")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "cutproxy: --target is required")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cutproxy:", err)
		os.Exit(2)
	}
	p := &proxy{conns: map[net.Conn]struct{}{}}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sig {
			if s == syscall.SIGUSR2 {
				p.mu.Lock()
				p.down = time.Now().Add(*hold)
				p.mu.Unlock()
			}
			fmt.Printf("cut %d\n", p.cut())
		}
	}()
	fmt.Printf("listening %s\n", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cutproxy:", err)
			os.Exit(1)
		}
		go p.serve(c, *target)
	}
}
