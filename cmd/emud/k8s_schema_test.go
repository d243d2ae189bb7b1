package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// k8sJob is the part of the batch/v1 Job schema (Kubernetes API reference:
// Job, JobSpec, PodTemplateSpec, PodSpec, Container) that farm k8s uses,
// with the API's field names; decoding with unknown fields refused checks
// that the manifest uses no field outside it.
type k8sJob struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   k8sMeta    `json:"metadata"`
	Spec       k8sJobSpec `json:"spec"`
}

type k8sMeta struct {
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

type k8sJobSpec struct {
	CompletionMode string      `json:"completionMode"` // NonIndexed or Indexed
	Completions    *int        `json:"completions"`
	Parallelism    *int        `json:"parallelism"`
	BackoffLimit   *int        `json:"backoffLimit"`
	Template       k8sTemplate `json:"template"`
}

type k8sTemplate struct {
	Metadata k8sMeta    `json:"metadata"`
	Spec     k8sPodSpec `json:"spec"`
}

type k8sPodSpec struct {
	RestartPolicy string         `json:"restartPolicy"` // a Job's pods: Never or OnFailure
	Containers    []k8sContainer `json:"containers"`
}

type k8sContainer struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Command []string `json:"command"`
}

func decodeK8sJob(t *testing.T, manifest string) k8sJob {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(manifest)))
	d.DisallowUnknownFields()
	var j k8sJob
	require.NoError(t, d.Decode(&j), "the manifest uses a field outside batch/v1 Job's schema subset")
	return j
}
