# For those who build with a container engine; `make image` builds the same image without one.
#   docker build --build-arg VERSION=$(cat VERSION) -t queue-scheduler:$(cat VERSION) .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-dev
ARG COMMIT=""
ARG BUILD_DATE=""
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X github.com/queue-scheduler/queue-scheduler/pkg/version.version=${VERSION} -X github.com/queue-scheduler/queue-scheduler/pkg/version.commit=${COMMIT} -X github.com/queue-scheduler/queue-scheduler/pkg/version.buildDate=${BUILD_DATE}" \
      -o /out/queue-scheduler ./cmd/queue-scheduler

FROM scratch
COPY --from=build /out/queue-scheduler /queue-scheduler
USER 65532:65532
ENTRYPOINT ["/queue-scheduler"]
