// lifecycle-app: the pod-lifecycle-e2e test workload (standard library, and gRPC for its health server).
//
// An HTTP server with probe endpoints and a configurable reaction to SIGTERM, which logs every
// fact that a scenario measures to stdout (the container log), one line each:
//
//	<epoch seconds>.<microseconds> <EVENT> [key=value ...]
//
// e.g. "1764400000.123456 SIGTERM mode=drain pid=1". The clock is the kernel's wall clock, which on
// kind is the host's clock too, so the times compare directly with the test process's clock.
//
// Serving (the default command):
//
//	/app [--listen :8080] [--sigterm drain|exit|ignore|default] [--drain-delay D]
//	     [--shutdown-timeout D] [--request-delay D] [--startup-delay D] [--heartbeat D]
//	     [--log-requests] [--grpc-listen :9090 [--grpc-not-serving-after D]]
//
// Every flag can also be set by the environment: APP_SIGTERM, APP_DRAIN_DELAY, ... (a flag given
// on the command line wins). Durations use Go's syntax (500ms, 5s).
//
//	GET /          200 "<hostname> delay=<d>\n" after the request delay (?delay=D overrides it)
//	GET /healthz   liveness: always 200
//	GET /readyz    readiness: 200, or 503 once SIGTERM was received in drain mode
//	GET /startupz  startup: 503 until --startup-delay after the start, then 200
//	GET /code/N    answers status N (100-999), a probe target per status code
//	GET /redirect/same   302 to /code/200 on the same host
//	GET /redirect/other  302 to http://127.0.0.2:1/ (another host, where nothing listens)
//	GET /slow      200 after ?delay=D (default 3s): a probe that outlasts its timeoutSeconds
//
// Probe endpoints log "PROBE path=/readyz status=200 agent="kube-probe/1.37" accept="*/*"" on every
// hit (the kubelet's probes identify themselves by their User-Agent; a redirect adds location=...);
// "/" requests are logged with --log-requests.
//
// With --grpc-listen the app also serves the standard gRPC health service (grpc.go): SERVING,
// then NOT_SERVING from --grpc-not-serving-after on, each Check logged as a PROBE line.
//
// SIGTERM behaviour (--sigterm):
//
//	drain    log SIGTERM, fail /readyz, keep serving for --drain-delay, then stop accepting
//	         connections and finish in-flight requests (http.Server.Shutdown, at most
//	         --shutdown-timeout), log EXIT code=0 and exit 0.
//	exit     log SIGTERM and end at once: killed by the re-raised signal (exit code 143 as the
//	         runtime reports it). The kernel never applies a default action to the init process
//	         of a PID namespace (PID 1 of a container), so as PID 1 the app exits 143 (128 +
//	         SIGTERM, the shell's convention) itself, logging EXIT code=143 reason=pid1-....
//	ignore   log every SIGTERM and carry on (until SIGKILL).
//	default  install no handler at all: whatever Go's runtime does with SIGTERM. Not as PID 1
//	         the process dies by the signal (143); as PID 1 Go's runtime cannot die by it and
//	         exits 2 (runtime.dieFromSignal's fallback).
//
// The hook subcommand is for exec lifecycle hooks (they run in the container but are not
// children of PID 1, so their output is not the container log): it writes its lines to PID 1's
// stdout (/proc/1/fd/1) instead:
//
//	/app hook [--name preStop] [--sleep D]    logs "HOOK name=preStop phase=start", sleeps, "phase=end"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	logMu  sync.Mutex
	logOut io.Writer = os.Stdout
)

// logf writes one "<epoch s>.<µs> EVENT key=value..." line, unbuffered: the suite's one stamp
// shape (e2e/evidence/stamps.py).
func logf(event string, format string, args ...any) {
	now := time.Now().UnixMicro()
	line := fmt.Sprintf("%d.%06d %s", now/1_000_000, now%1_000_000, event)
	if format != "" {
		line += " " + fmt.Sprintf(format, args...)
	}
	logMu.Lock()
	defer logMu.Unlock()
	io.WriteString(logOut, line+"\n")
}

// envDefault lets APP_<NAME> set a flag's default (NAME upper-case, '-' as '_').
func envDefault(name, def string) string {
	if v, ok := os.LookupEnv("APP_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

func durationFlag(fs *flag.FlagSet, name, def, usage string) *time.Duration {
	d, err := time.ParseDuration(envDefault(name, def))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bad APP_%s: %v\n", strings.ToUpper(strings.ReplaceAll(name, "-", "_")), err)
		os.Exit(2)
	}
	return fs.Duration(name, d, usage)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		os.Exit(hook(os.Args[2:]))
	}
	os.Exit(serve(os.Args[1:]))
}

func hook(args []string) int {
	fs := flag.NewFlagSet("hook", flag.ExitOnError)
	name := fs.String("name", "preStop", "hook name in the log lines")
	sleep := fs.Duration("sleep", 0, "how long the hook runs")
	fs.Parse(args)
	if f, err := os.OpenFile("/proc/1/fd/1", os.O_WRONLY|os.O_APPEND, 0); err == nil {
		defer f.Close()
		logOut = f
	}
	logf("HOOK", "name=%s phase=start sleep=%s pid=%d", *name, *sleep, os.Getpid())
	time.Sleep(*sleep)
	logf("HOOK", "name=%s phase=end", *name)
	return 0
}

type app struct {
	requestDelay time.Duration
	startupDelay time.Duration
	logRequests  bool
	started      time.Time
	hostname     string
	notReady     atomic.Bool
	inFlight     atomic.Int64
}

func (a *app) probe(w http.ResponseWriter, r *http.Request, status int) {
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d\n", status)
	logf("PROBE", "path=%s status=%d agent=%q accept=%q", r.URL.Path, status, r.UserAgent(), r.Header.Get("Accept"))
}

func (a *app) redirect(w http.ResponseWriter, r *http.Request, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusFound)
	fmt.Fprintf(w, "%d\n", http.StatusFound)
	logf("PROBE", "path=%s status=%d location=%s agent=%q accept=%q", r.URL.Path, http.StatusFound, location, r.UserAgent(), r.Header.Get("Accept"))
}

func (a *app) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { a.probe(w, r, http.StatusOK) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if a.notReady.Load() {
			status = http.StatusServiceUnavailable
		}
		a.probe(w, r, status)
	})
	mux.HandleFunc("/startupz", func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if time.Since(a.started) < a.startupDelay {
			status = http.StatusServiceUnavailable
		}
		a.probe(w, r, status)
	})
	mux.HandleFunc("/code/", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/code/"))
		if err != nil || code < 100 || code > 999 {
			code = http.StatusBadRequest
		}
		a.probe(w, r, code)
	})
	mux.HandleFunc("/redirect/same", func(w http.ResponseWriter, r *http.Request) { a.redirect(w, r, "/code/200") })
	mux.HandleFunc("/redirect/other", func(w http.ResponseWriter, r *http.Request) { a.redirect(w, r, "http://127.0.0.2:1/") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		delay := 3 * time.Second
		if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil {
			delay = d
		}
		logf("PROBE", "path=%s phase=start delay=%s agent=%q", r.URL.Path, delay, r.UserAgent())
		time.Sleep(delay)
		a.probe(w, r, http.StatusOK)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := a.inFlight.Add(1)
		defer a.inFlight.Add(-1)
		delay := a.requestDelay
		if q := r.URL.Query().Get("delay"); q != "" {
			if d, err := time.ParseDuration(q); err == nil {
				delay = d
			}
		}
		if a.logRequests {
			logf("REQUEST", "phase=start path=%s inflight=%d remote=%s", r.URL.Path, n, r.RemoteAddr)
		}
		time.Sleep(delay)
		fmt.Fprintf(w, "%s delay=%s\n", a.hostname, delay)
		if a.logRequests {
			logf("REQUEST", "phase=end path=%s", r.URL.Path)
		}
	})
	return mux
}

func serve(args []string) int {
	fs := flag.NewFlagSet("lifecycle-app", flag.ExitOnError)
	listen := fs.String("listen", envDefault("listen", ":8080"), "address to serve on")
	mode := fs.String("sigterm", envDefault("sigterm", "drain"), "reaction to SIGTERM: drain, exit, ignore or default")
	drainDelay := durationFlag(fs, "drain-delay", "0s", "drain mode: keep serving (not ready) this long after SIGTERM")
	shutdownTimeout := durationFlag(fs, "shutdown-timeout", "30s", "drain mode: longest wait for in-flight requests")
	requestDelay := durationFlag(fs, "request-delay", "0s", "how long each / request takes")
	startupDelay := durationFlag(fs, "startup-delay", "0s", "/startupz fails this long after the start")
	heartbeat := durationFlag(fs, "heartbeat", "0s", "log TICK at this interval (0: never)")
	logRequests := fs.Bool("log-requests", envDefault("log-requests", "false") == "true", "log every / request")
	grpcListen := fs.String("grpc-listen", envDefault("grpc-listen", ""), "serve the gRPC health service on this address too (empty: not)")
	grpcNotServingAfter := durationFlag(fs, "grpc-not-serving-after", "0s", "the gRPC health service answers NOT_SERVING from this long after the start (0: never)")
	fs.Parse(args)

	switch *mode {
	case "drain", "exit", "ignore", "default":
	default:
		fmt.Fprintf(os.Stderr, "--sigterm must be drain, exit, ignore or default, not %q\n", *mode)
		return 2
	}
	hostname, _ := os.Hostname()
	a := &app{requestDelay: *requestDelay, startupDelay: *startupDelay, logRequests: *logRequests,
		started: time.Now(), hostname: hostname}

	// Subscribe before listening: a SIGTERM that comes right after the start is not lost.
	sigs := make(chan os.Signal, 4)
	if *mode != "default" {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logf("ERROR", "listen=%s err=%q", *listen, err)
		return 1
	}
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logf("START", "pid=%d mode=%s listen=%s drain_delay=%s request_delay=%s startup_delay=%s host=%s",
		os.Getpid(), *mode, *listen, *drainDelay, *requestDelay, *startupDelay, hostname)

	if *grpcListen != "" {
		go serveGRPC(*grpcListen, *grpcNotServingAfter)
	}
	if *heartbeat > 0 {
		go func() {
			for range time.Tick(*heartbeat) {
				logf("TICK", "")
			}
		}()
	}

	for {
		select {
		case err := <-served:
			logf("ERROR", "serve err=%q", err)
			return 1
		case sig := <-sigs:
			name := "SIGTERM"
			if sig == syscall.SIGINT {
				name = "SIGINT"
			}
			logf(name, "mode=%s pid=%d inflight=%d", *mode, os.Getpid(), a.inFlight.Load())
			switch *mode {
			case "ignore":
				continue
			case "exit":
				return dieBySignal(sig.(syscall.Signal))
			case "drain":
				return drain(a, srv, *drainDelay, *shutdownTimeout)
			}
		}
	}
}

// dieBySignal ends the process by sig's default action (exit code 128 + sig as the runtime
// reports it). Not as PID 1: restore Go's default handling and raise it again; Go's runtime
// then resets the action to SIG_DFL and the kernel kills the process. As PID 1 (the init of
// the container's PID namespace) the kernel drops a signal whose action is the default one, and
// Go's runtime would fall back to exit(2): so exit with 128 + sig directly, saying so.
func dieBySignal(sig syscall.Signal) int {
	code := 128 + int(sig)
	if os.Getpid() != 1 {
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal kills us here
	}
	logf("EXIT", "code=%d reason=pid1-cannot-die-by-default-action pid=%d", code, os.Getpid())
	return code
}

func drain(a *app, srv *http.Server, delay, timeout time.Duration) int {
	a.notReady.Store(true)
	logf("DRAIN", "phase=start delay=%s", delay)
	time.Sleep(delay)
	logf("SHUTDOWN", "phase=start inflight=%d", a.inFlight.Load())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(ctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		logf("SHUTDOWN", "phase=end err=%q inflight=%d", err, a.inFlight.Load())
		logf("EXIT", "code=1")
		return 1
	}
	logf("SHUTDOWN", "phase=end inflight=%d", a.inFlight.Load())
	logf("EXIT", "code=0")
	return 0
}
