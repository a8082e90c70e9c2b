module github.com/h9-app/h9

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/kelseyhightower/envconfig v1.4.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
