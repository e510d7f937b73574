package main

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// A connection through the proxy carries bytes both ways until cut, then ends;
// a new connection afterwards works again.
func TestCut(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c) }()
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{conns: map[net.Conn]struct{}{}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c, echo.Addr().String())
		}
	}()
	roundTrip := func(c net.Conn) error {
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := bufio.NewReader(c).ReadString('\n')
		return err
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	if n := p.cut(); n != 2 {
		t.Fatalf("cut %d connections, want 2 (both sides of one)", n)
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
		t.Fatal("the connection still reads after the cut")
	}
	c2, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c2); err != nil {
		t.Fatalf("a new connection after the cut: %v", err)
	}

	// While the path is held down, a new connection is closed at once.
	p.mu.Lock()
	p.down = time.Now().Add(time.Hour)
	p.mu.Unlock()
	c3, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c3); err == nil {
		t.Fatal("a connection went through while the path was held down")
	}
}
