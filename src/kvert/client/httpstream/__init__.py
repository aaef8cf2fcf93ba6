"""Streams over HTTP, as ``k8s.io/apimachinery/pkg/util/httpstream`` and client-go's
``remotecommand`` and ``portforward`` carry them: WebSocket channels and SPDY/3.1, both
ends. The API server serves them to kubectl and clients; the node agent's kubelet
endpoint serves them to the API server, which connects to it as a client."""
