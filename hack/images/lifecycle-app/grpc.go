package main

// The gRPC health server (--grpc-listen): the standard grpc.health.v1.Health service of
// google.golang.org/grpc/health, as a kubelet grpc probe asks it (PB-3 (e)). The overall
// service ("") answers SERVING from the start and NOT_SERVING from --grpc-not-serving-after on
// (0: never), logging "GRPC status=NOT_SERVING" at the switch; every Check is logged as
// "PROBE kind=grpc method=/grpc.health.v1.Health/Check service=\"\" status=SERVING agent=\"kube-probe/1.37\"".

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// serveGRPC listens on listen and serves the health service until the process ends; an error
// to listen or serve is logged as ERROR and ends nothing else.
func serveGRPC(listen string, notServingAfter time.Duration) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		logf("ERROR", "grpc-listen=%s err=%q", listen, err)
		return
	}
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCheck))
	healthpb.RegisterHealthServer(srv, hs)
	if notServingAfter > 0 {
		time.AfterFunc(notServingAfter, func() {
			hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			logf("GRPC", "status=NOT_SERVING after=%s", notServingAfter)
		})
	}
	logf("GRPC", "status=SERVING listen=%s not_serving_after=%s", listen, notServingAfter)
	if err := srv.Serve(ln); err != nil {
		logf("ERROR", "grpc serve err=%q", err)
	}
}

// logCheck logs each unary call (the health Check) with the caller's user agent and the answer.
func logCheck(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	agent := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("user-agent")) > 0 {
		agent = md.Get("user-agent")[0]
	}
	service := ""
	if r, ok := req.(*healthpb.HealthCheckRequest); ok {
		service = r.GetService()
	}
	status := "error"
	if r, ok := resp.(*healthpb.HealthCheckResponse); ok && err == nil {
		status = r.GetStatus().String()
	}
	logf("PROBE", "kind=grpc method=%s service=%q status=%s agent=%q", info.FullMethod, service, status, agent)
	return resp, err
}
