module github.com/geoknn/geoknn

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.3
	github.com/paulmach/orb v0.14.0
	golang.org/x/sync v0.24.0
	gonum.org/v1/gonum v0.17.0
)

require go.mongodb.org/mongo-driver/v2 v2.5.0 // indirect
