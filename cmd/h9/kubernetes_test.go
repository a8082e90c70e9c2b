package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// k8sManifests are deploy/kubernetes's files, each decoded strictly into
// the API type of its kind: a misspelt or misplaced field fails here, as
// `kubectl apply --validate=strict` would fail it, without a cluster.
type k8sManifests struct {
	deployment appsv1.Deployment
	secret     corev1.Secret
	settings   corev1.ConfigMap
	data       corev1.PersistentVolumeClaim
	metrics    corev1.Service
	budget     policyv1.PodDisruptionBudget
}

func readK8sManifests(t *testing.T) k8sManifests {
	t.Helper()
	var m k8sManifests
	targets := map[string]any{
		"apps/v1 Deployment": &m.deployment, "v1 Secret": &m.secret, "v1 ConfigMap": &m.settings,
		"v1 PersistentVolumeClaim": &m.data, "v1 Service": &m.metrics, "policy/v1 PodDisruptionBudget": &m.budget,
	}
	files, err := filepath.Glob(filepath.Join(deployDir, "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(data, &head); err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		key := head.APIVersion + " " + head.Kind
		target, known := targets[key]
		if !known {
			t.Fatalf("%s: %s is not a kind this test knows (or a second one of it)", filepath.Base(f), key)
		}
		delete(targets, key)
		if err := yaml.UnmarshalStrict(data, target); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	for key := range targets {
		t.Errorf("deploy/kubernetes has no %s", key)
	}
	return m
}

// The strict decode refuses what the API would: an unknown field.
func TestK8sStrictDecodeRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	var d appsv1.Deployment
	bad := "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: h9\n          livenessProbe: {httpGet: {path: /healthz, port: 9090}, periodSecond: 10}\n"
	if err := yaml.UnmarshalStrict([]byte(bad), &d); err == nil || !strings.Contains(err.Error(), "periodSecond") {
		t.Errorf("a misspelt field was accepted: %v", err)
	}
}

// The manifests make a fleet h9 can run in: replicas on the shared
// ReadWriteMany data directory, probes on the health endpoints at
// H9_HTTP_ADDR's port, the security context bubblewrap needs, the tokens
// from a Secret, one replica down at a time, and a Service for metrics.
func TestK8sManifests(t *testing.T) {
	t.Parallel()
	m := readK8sManifests(t)
	d := m.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: a fleet needs two or more", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want h9 alone", len(pod.Containers))
	}
	c := pod.Containers[0]
	settings := m.settings.Data

	// Probes on /healthz and /readyz, at the port h9 serves them on.
	_, port, _ := strings.Cut(settings["H9_HTTP_ADDR"], ":")
	if port == "" || len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("H9_HTTP_ADDR %q and the container's ports %+v disagree", settings["H9_HTTP_ADDR"], c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		want := map[string]string{"startup": "/healthz", "liveness": "/healthz", "readiness": "/readyz"}[name]
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %+v, want GET %s on the metrics port", name, p, want)
		}
	}

	// The shared data directory: ReadWriteMany, mounted at H9_DATA_DIR.
	if !slices.Contains(m.data.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the data volume's access modes %v: replicas share it, it needs ReadWriteMany", m.data.Spec.AccessModes)
	}
	var claim string
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.Name
			if v.PersistentVolumeClaim.ClaimName != m.data.Name {
				t.Errorf("volume %s claims %s, not %s", v.Name, v.PersistentVolumeClaim.ClaimName, m.data.Name)
			}
		}
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(vm corev1.VolumeMount) bool {
		return vm.Name == claim && vm.MountPath == settings["H9_DATA_DIR"] && !vm.ReadOnly
	}) {
		t.Errorf("the claim is not mounted writable at H9_DATA_DIR=%s: %+v", settings["H9_DATA_DIR"], c.VolumeMounts)
	}
	if settings["H9_SANDBOX"] != "bwrap" {
		t.Errorf("H9_SANDBOX=%q: a replica must stop rather than run with less than bubblewrap", settings["H9_SANDBOX"])
	}

	// What bubblewrap needs, and nothing more.
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container security context")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined:
		t.Error("seccomp: the runtime's default profile refuses bwrap's user namespace")
	case sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined:
		t.Error("AppArmor: the runtime's default profile refuses bwrap's mounts")
	case sc.ProcMount == nil || *sc.ProcMount != corev1.UnmaskedProcMount || pod.HostUsers == nil || *pod.HostUsers:
		t.Error("/proc: bwrap's fresh /proc needs procMount Unmasked, which needs hostUsers: false")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged: bubblewrap needs no privilege")
	case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v: drop ALL, add none", sc.Capabilities)
	case pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot:
		t.Error("the pod must run as the image's h9 user, not root")
	}

	// Tokens from the Secret; no secret in the ConfigMap.
	var fromSecret bool
	for _, e := range c.EnvFrom {
		fromSecret = fromSecret || (e.SecretRef != nil && e.SecretRef.Name == m.secret.Name)
	}
	if !fromSecret {
		t.Errorf("the container does not read the Secret %s", m.secret.Name)
	}
	for _, name := range append(slices.Clone(secretSettings), "H9_DATABASE_URL") {
		if _, in := settings[name]; in {
			t.Errorf("%s is in the ConfigMap: it belongs in the Secret", name)
		}
	}
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "H9_DATABASE_URL"} {
		if _, in := m.secret.StringData[name]; !in {
			t.Errorf("the Secret lacks %s", name)
		}
	}
	known := map[string]bool{}
	for _, s := range allSettings {
		known[s.name] = true
	}
	for name := range settings {
		if !known[name] {
			t.Errorf("the ConfigMap sets %s, which h9 does not read", name)
		}
	}

	// One replica down at a time; the Service reaches every replica's metrics.
	labels := d.Spec.Template.Labels
	matches := func(sel map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if b := m.budget.Spec; b.Selector == nil || !matches(b.Selector.MatchLabels) || (b.MaxUnavailable == nil && b.MinAvailable == nil) {
		t.Errorf("the PodDisruptionBudget %+v does not cover h9's pods", b)
	}
	if s := m.metrics.Spec; !matches(s.Selector) || len(s.Ports) != 1 || s.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("the metrics Service %+v does not reach h9's metrics port", s)
	}
	if d.Spec.Template.Spec.TerminationGracePeriodSeconds == nil || *d.Spec.Template.Spec.TerminationGracePeriodSeconds < 30 {
		t.Error("terminationGracePeriodSeconds: h9 needs time to finish its step and release its sessions")
	}
}
