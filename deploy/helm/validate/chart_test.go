// Package validate checks the Helm chart in ../crawler offline: `helm lint --strict`,
// then `helm template` for default and production-like values, with and without the
// monitoring.coreos.com/v1 API and the renderer tier, and every rendered manifest
// strictly decoded into its Kubernetes type (unknown fields are errors). It lives in its own module so the
// crawler's go.mod does not carry k8s.io dependencies.
//
// helm is taken from PATH or $HOME/go/bin; install it with
//
//	go install helm.sh/helm/v3/cmd/helm@v3.22.0
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const (
	chartDir        = "../crawler"
	productionVals  = "../crawler/ci/production-values.yaml"
	helmInstall     = "go install helm.sh/helm/v3/cmd/helm@v3.22.0"
	monitoringAPI   = "monitoring.coreos.com/v1"
	releaseName     = "crawl"
	releaseNS       = "crawler"
	instanceIDEnv   = "CRAWLER_INSTANCE_ID"
	spoolEnv        = "CRAWLER_SPOOL"
	renderEnv       = "CRAWLER_RENDER"
	queueFile       = "../../../pkg/queue/queue.go"
	livenessPath    = "/-/healthy"
	readinessPath   = "/-/ready"
	metricsSvcLabel = "crawlcluster.io/metrics"
)

// helmBinary finds helm on PATH or in $HOME/go/bin, where `go install` puts it.
func helmBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("helm not found on PATH or in $HOME/go/bin; install it with:\n\t%s", helmInstall)
	return ""
}

func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func TestLint(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"production", []string{"-f", productionVals}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, tc.args...)...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// rendered is one chart rendering, decoded.
type rendered struct {
	configMaps   []corev1.ConfigMap
	secrets      []corev1.Secret
	services     []corev1.Service
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	pdbs         []policyv1.PodDisruptionBudget
	hpas         []autoscalingv2.HorizontalPodAutoscaler
	scaledObjs   []scaledObject
	svcMonitors  []serviceMonitor
	promRules    []prometheusRule
	kinds        []string
}

// workload is a Deployment or StatefulSet seen through what the checks need.
type workload struct {
	kind, name string
	replicas   *int32
	selector   *metav1.LabelSelector
	template   corev1.PodTemplateSpec
}

func (r *rendered) workloads() []workload {
	var ws []workload
	for _, d := range r.deployments {
		ws = append(ws, workload{"Deployment", d.Name, d.Spec.Replicas, d.Spec.Selector, d.Spec.Template})
	}
	for _, s := range r.statefulSets {
		ws = append(ws, workload{"StatefulSet", s.Name, s.Spec.Replicas, s.Spec.Selector, s.Spec.Template})
	}
	return ws
}

func (r *rendered) workload(kind, name string) (workload, bool) {
	for _, w := range r.workloads() {
		if w.kind == kind && w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

// The CRDs are decoded into small structs that hold exactly the fields the chart
// renders, strictly, so a typo or a stray field fails like it would for a core type.

type crdMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
}

type scaleTargetRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

type scaledObject struct {
	crdMeta `json:",inline"`
	Spec    struct {
		ScaleTargetRef  scaleTargetRef `json:"scaleTargetRef"`
		MinReplicaCount *int32         `json:"minReplicaCount"`
		MaxReplicaCount *int32         `json:"maxReplicaCount"`
		PollingInterval *int32         `json:"pollingInterval"`
		CooldownPeriod  *int32         `json:"cooldownPeriod"`
		Advanced        *struct {
			HorizontalPodAutoscalerConfig *struct {
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior"`
			} `json:"horizontalPodAutoscalerConfig"`
		} `json:"advanced"`
		Triggers []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

type serviceMonitor struct {
	crdMeta `json:",inline"`
	Spec    struct {
		Selector     metav1.LabelSelector `json:"selector"`
		TargetLabels []string             `json:"targetLabels"`
		Endpoints    []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type prometheusRule struct {
	crdMeta `json:",inline"`
	Spec    struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Alert         string            `json:"alert,omitempty"`
				Record        string            `json:"record,omitempty"`
				Expr          string            `json:"expr"`
				For           string            `json:"for,omitempty"`
				KeepFiringFor string            `json:"keep_firing_for,omitempty"`
				Labels        map[string]string `json:"labels,omitempty"`
				Annotations   map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// strictDecode decodes JSON into v, rejecting fields v does not have.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// render runs helm template and decodes every manifest into its type.
func render(t *testing.T, args ...string) *rendered {
	t.Helper()
	out, err := runHelm(t, append([]string{"template", releaseName, chartDir, "--namespace", releaseNS}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{}
	for i, doc := range docSeparator.Split(out, -1) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		if string(js) == "null" {
			continue // only comments
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		gvk := tm.APIVersion + "/" + tm.Kind
		r.kinds = append(r.kinds, gvk)
		var target any
		switch gvk {
		case "v1/ConfigMap":
			target = appendTo(&r.configMaps)
		case "v1/Secret":
			target = appendTo(&r.secrets)
		case "v1/Service":
			target = appendTo(&r.services)
		case "v1/ServiceAccount":
			target = new(corev1.ServiceAccount)
		case "apps/v1/Deployment":
			target = appendTo(&r.deployments)
		case "apps/v1/StatefulSet":
			target = appendTo(&r.statefulSets)
		case "policy/v1/PodDisruptionBudget":
			target = appendTo(&r.pdbs)
		case "autoscaling/v2/HorizontalPodAutoscaler":
			target = appendTo(&r.hpas)
		case "keda.sh/v1alpha1/ScaledObject":
			target = appendTo(&r.scaledObjs)
		case "monitoring.coreos.com/v1/ServiceMonitor":
			target = appendTo(&r.svcMonitors)
		case "monitoring.coreos.com/v1/PrometheusRule":
			target = appendTo(&r.promRules)
		default:
			t.Fatalf("document %d: unexpected %s\n%s", i, gvk, doc)
		}
		if err := strictDecode(js, target); err != nil {
			t.Fatalf("document %d (%s): %v\n%s", i, gvk, err, doc)
		}
	}
	return r
}

// appendTo appends a zero element to *s and returns a pointer to it.
func appendTo[T any](s *[]T) *T {
	*s = append(*s, *new(T))
	return &(*s)[len(*s)-1]
}

func TestTemplate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		values     string
		set        string
		monitoring bool
		// expectations
		existingSecret bool
		renderer       bool
		scaledObjects  int
		hpas           int
	}{
		{name: "default", values: ""},
		{name: "default+monitoring", values: "", monitoring: true},
		// Production: fetchers and renderers scaled by KEDA, parsers by an HPA.
		{name: "production", values: productionVals, existingSecret: true, renderer: true, scaledObjects: 2, hpas: 1},
		{name: "production+monitoring", values: productionVals, monitoring: true, existingSecret: true, renderer: true, scaledObjects: 2, hpas: 1},
		// Fetchers as a Deployment (dynamic membership), both tiers scaled by KEDA.
		{name: "dynamic membership+keda", set: "fetcher.staticMembership=false,fetcher.autoscaling.keda.enabled=true,parser.autoscaling.keda.enabled=true", scaledObjects: 2},
		{name: "renderer", set: "renderer.enabled=true", renderer: true},
		{name: "renderer+monitoring", set: "renderer.enabled=true", monitoring: true, renderer: true},
		// Every tier on its lag; a renderer of 6 tabs of 512 MiB sizes its own limit.
		{name: "renderer+keda", set: "renderer.enabled=true,renderer.tabs=6,renderer.heapMiB=512,fetcher.autoscaling.keda.enabled=true,parser.autoscaling.keda.enabled=true,renderer.autoscaling.keda.enabled=true", renderer: true, scaledObjects: 3},
		{name: "renderer+hpa", set: "renderer.enabled=true,renderer.autoscaling.hpa.enabled=true", renderer: true, hpas: 1},
		// The renderer's image given whole, a memory limit given by hand.
		{name: "renderer image and memory given", set: "renderer.enabled=true,renderer.image.repository=registry.example.org/render,renderer.image.tag=2.0-chromium,renderer.resources.limits.memory=2Gi", renderer: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tc.values != "" {
				args = append(args, "-f", tc.values)
			}
			if tc.set != "" {
				args = append(args, "--set", tc.set)
			}
			if tc.monitoring {
				args = append(args, "--api-versions", monitoringAPI)
			}
			r := render(t, args...)
			comps := slices.Clone(components)
			if tc.renderer {
				comps = append(comps, "renderer")
			}

			checkWorkloads(t, r, comps)
			checkRender(t, r, tc.renderer)
			checkPDBs(t, r)
			checkServices(t, r, comps)
			checkScaling(t, r, tc.hpas, tc.scaledObjects)
			checkConfig(t, r, tc.existingSecret)
			checkMonitoring(t, r, tc.monitoring, comps)
		})
	}
}

// components are the tiers every release runs; renderer.enabled adds "renderer".
var components = []string{"frontier", "fetcher", "parser"}

func component(w workload) string { return w.template.Labels["app.kubernetes.io/component"] }

func checkWorkloads(t *testing.T, r *rendered, components []string) {
	t.Helper()
	ws := r.workloads()
	var got []string
	for _, w := range ws {
		got = append(got, component(w))
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(components)); !slices.Equal(got, want) {
		t.Errorf("workload components = %v, want %v", got, want)
	}
	for _, w := range ws {
		name := w.kind + "/" + w.name
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.template.Labels)) {
			t.Errorf("%s: selector %v does not match its pod labels %v (%v)", name, w.selector, w.template.Labels, err)
		}
		pod := w.template.Spec
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("%s: pod securityContext must run as a non-root user: %+v", name, psc)
		}
		if len(pod.Containers) == 0 {
			t.Fatalf("%s: no containers", name)
		}
		volumes := map[string]corev1.Volume{}
		for _, v := range pod.Volumes {
			volumes[v.Name] = v
		}
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			cn := name + " container " + c.Name
			checkProbe(t, cn+" liveness", c.LivenessProbe, livenessPath, c.Ports)
			checkProbe(t, cn+" readiness", c.ReadinessProbe, readinessPath, c.Ports)
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s: no securityContext", cn)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s: root filesystem must be read-only", cn)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s: allowPrivilegeEscalation must be false", cn)
			case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot, sc.RunAsUser != nil && *sc.RunAsUser == 0:
				t.Errorf("%s: container overrides the non-root pod user", cn)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL"):
				t.Errorf("%s: capabilities must drop ALL", cn)
			}
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[res]; !ok || q.IsZero() {
					t.Errorf("%s: no %s request", cn, res)
				}
			}
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
				t.Errorf("%s: no memory limit", cn)
			}
			for _, m := range c.VolumeMounts {
				v, ok := volumes[m.Name]
				if !ok {
					t.Errorf("%s: mounts undeclared volume %q", cn, m.Name)
				} else if v.EmptyDir == nil && !m.ReadOnly {
					t.Errorf("%s: writable mount %q is not an emptyDir", cn, m.Name)
				}
			}
			env := map[string]corev1.EnvVar{}
			for _, e := range c.Env {
				env[e.Name] = e
			}
			switch component(w) {
			case "parser":
				// The root filesystem is read-only: the spool must be a mounted emptyDir.
				spool, ok := env[spoolEnv]
				if !ok || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
					return m.MountPath == spool.Value && volumes[m.Name].EmptyDir != nil
				}) {
					t.Errorf("%s: %s=%q is not a mounted emptyDir", cn, spoolEnv, spool.Value)
				}
			case "fetcher":
				if w.kind == "StatefulSet" {
					id, ok := env[instanceIDEnv]
					if !ok || id.ValueFrom == nil || id.ValueFrom.FieldRef == nil || id.ValueFrom.FieldRef.FieldPath != "metadata.name" {
						t.Errorf("%s: %s must come from the pod name (static group membership)", cn, instanceIDEnv)
					}
				}
			}
		}
	}
	for _, s := range r.statefulSets {
		if !slices.ContainsFunc(r.services, func(svc corev1.Service) bool {
			return svc.Name == s.Spec.ServiceName && svc.Spec.ClusterIP == corev1.ClusterIPNone
		}) {
			t.Errorf("StatefulSet/%s: serviceName %q is not a rendered headless Service", s.Name, s.Spec.ServiceName)
		}
	}
}

// checkProbe wants an HTTP GET of path on a port the container declares.
func checkProbe(t *testing.T, what string, p *corev1.Probe, path string, ports []corev1.ContainerPort) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: no HTTP probe", what)
		return
	}
	if p.HTTPGet.Path != path {
		t.Errorf("%s: path %q, want %q", what, p.HTTPGet.Path, path)
	}
	if !slices.ContainsFunc(ports, func(cp corev1.ContainerPort) bool {
		return cp.Name == p.HTTPGet.Port.String() || cp.ContainerPort == p.HTTPGet.Port.IntVal
	}) {
		t.Errorf("%s: port %s is not a container port", what, p.HTTPGet.Port.String())
	}
}

func checkPDBs(t *testing.T, r *rendered) {
	t.Helper()
	for _, w := range r.workloads() {
		n := 0
		for _, p := range r.pdbs {
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err != nil {
				t.Errorf("PodDisruptionBudget/%s: %v", p.Name, err)
				continue
			}
			if !sel.Empty() && sel.Matches(labels.Set(w.template.Labels)) {
				n++
				if p.Spec.MinAvailable == nil && p.Spec.MaxUnavailable == nil {
					t.Errorf("PodDisruptionBudget/%s: neither minAvailable nor maxUnavailable", p.Name)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s/%s: %d PodDisruptionBudgets select its pods, want 1", w.kind, w.name, n)
		}
	}
}

func checkServices(t *testing.T, r *rendered, components []string) {
	t.Helper()
	metricsFor := map[string]bool{}
	apiService := false
	for _, s := range r.services {
		var target *workload
		for _, w := range r.workloads() {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.template.Labels)) && len(s.Spec.Selector) > 0 {
				target = &w
				break
			}
		}
		if target == nil {
			t.Errorf("Service/%s: selector %v matches no workload", s.Name, s.Spec.Selector)
			continue
		}
		c := target.template.Spec.Containers[0]
		for _, p := range s.Spec.Ports {
			if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
				return cp.Name == p.TargetPort.String() || cp.ContainerPort == p.TargetPort.IntVal
			}) {
				t.Errorf("Service/%s: targetPort %s is not a port of %s", s.Name, p.TargetPort.String(), target.name)
			}
		}
		if s.Labels[metricsSvcLabel] == "true" {
			if s.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("Service/%s: metrics Service must be headless", s.Name)
			}
			metricsFor[component(*target)] = true
		} else if component(*target) == "frontier" {
			apiService = true
		}
	}
	for _, c := range components {
		if !metricsFor[c] {
			t.Errorf("no headless metrics Service for %s", c)
		}
	}
	if !apiService {
		t.Error("no Service for the frontier API")
	}
}

func checkScaling(t *testing.T, r *rendered, hpas, scaledObjects int) {
	t.Helper()
	if len(r.hpas) != hpas || len(r.scaledObjs) != scaledObjects {
		t.Errorf("got %d HPAs and %d ScaledObjects, want %d and %d", len(r.hpas), len(r.scaledObjs), hpas, scaledObjects)
	}
	targets := map[string]bool{}
	check := func(what string, ref scaleTargetRef) {
		w, ok := r.workload(ref.Kind, ref.Name)
		switch {
		case !ok || ref.APIVersion != "apps/v1":
			t.Errorf("%s: scale target %+v is not a rendered workload", what, ref)
		case w.replicas != nil:
			t.Errorf("%s: %s/%s sets replicas; the autoscaler owns them", what, w.kind, w.name)
		case targets[ref.Kind+"/"+ref.Name]:
			t.Errorf("%s: %s/%s has two autoscalers", what, ref.Kind, ref.Name)
		}
		targets[ref.Kind+"/"+ref.Name] = true
	}
	for _, h := range r.hpas {
		ref := h.Spec.ScaleTargetRef
		check("HorizontalPodAutoscaler/"+h.Name, scaleTargetRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if h.Spec.MaxReplicas < 1 || (h.Spec.MinReplicas != nil && *h.Spec.MinReplicas > h.Spec.MaxReplicas) {
			t.Errorf("HorizontalPodAutoscaler/%s: bad replica bounds", h.Name)
		}
	}
	groups := consumerGroups(t)
	for _, s := range r.scaledObjs {
		what := "ScaledObject/" + s.Metadata.Name
		check(what, s.Spec.ScaleTargetRef)
		if len(s.Spec.Triggers) == 0 {
			t.Errorf("%s: no triggers", what)
		}
		target, _ := r.workload(s.Spec.ScaleTargetRef.Kind, s.Spec.ScaleTargetRef.Name)
		for _, tr := range s.Spec.Triggers {
			// The lag that scales a tier is its own group's on its own topic.
			if want, ok := groups[component(target)]; !ok {
				t.Errorf("%s: scales %s, which consumes no topic", what, component(target))
			} else if got := [2]string{tr.Metadata["consumerGroup"], tr.Metadata["topic"]}; got != want {
				t.Errorf("%s: scales %s on group %s topic %s, want %s on %s (pkg/queue)", what, component(target), got[0], got[1], want[0], want[1])
			}
			if tr.Type != "kafka" {
				t.Errorf("%s: trigger type %q, want kafka", what, tr.Type)
			}
			for _, k := range []string{"bootstrapServers", "consumerGroup", "topic", "lagThreshold"} {
				if tr.Metadata[k] == "" {
					t.Errorf("%s: kafka trigger without %s", what, k)
				}
			}
			if strings.Contains(tr.Metadata["bootstrapServers"], "://") {
				t.Errorf("%s: bootstrapServers %q must be host:port, not a URL", what, tr.Metadata["bootstrapServers"])
			}
		}
	}
}

func checkConfig(t *testing.T, r *rendered, existingSecret bool) {
	t.Helper()
	if len(r.secrets) != map[bool]int{true: 0, false: 1}[existingSecret] {
		t.Errorf("%d Secrets rendered with existingSecret=%v", len(r.secrets), existingSecret)
	}
	for _, s := range r.secrets {
		if s.StringData["CRAWLER_DB"] == "" && len(s.Data["CRAWLER_DB"]) == 0 {
			t.Errorf("Secret/%s: no CRAWLER_DB", s.Name)
		}
	}
	var settings map[string]string
	for _, cm := range r.configMaps {
		if _, ok := cm.Data["CRAWLER_BROKER"]; ok {
			settings = cm.Data
		}
	}
	if settings == nil {
		t.Fatal("no ConfigMap with the CRAWLER_* settings")
	}
	for k := range settings {
		if !strings.HasPrefix(k, "CRAWLER_") {
			t.Errorf("ConfigMap key %q is not a CRAWLER_* variable", k)
		}
		if slices.Contains([]string{"CRAWLER_DB", "CRAWLER_API_TOKENS", "CRAWLER_LISTEN"}, k) {
			t.Errorf("ConfigMap holds %s, which belongs in the Secret or the container", k)
		}
	}
	for _, w := range r.workloads() {
		for _, c := range w.template.Spec.Containers {
			for _, ef := range c.EnvFrom {
				switch {
				case ef.ConfigMapRef != nil:
					if !slices.ContainsFunc(r.configMaps, func(cm corev1.ConfigMap) bool { return cm.Name == ef.ConfigMapRef.Name }) {
						t.Errorf("%s/%s: envFrom ConfigMap %q not rendered", w.kind, w.name, ef.ConfigMapRef.Name)
					}
				case ef.SecretRef != nil && !existingSecret:
					if !slices.ContainsFunc(r.secrets, func(s corev1.Secret) bool { return s.Name == ef.SecretRef.Name }) {
						t.Errorf("%s/%s: envFrom Secret %q not rendered", w.kind, w.name, ef.SecretRef.Name)
					}
				}
			}
		}
	}
	dashboards := 0
	for _, cm := range r.configMaps {
		if cm.Labels["grafana_dashboard"] != "1" {
			continue
		}
		dashboards++
		for k, v := range cm.Data {
			var js map[string]any
			if err := json.Unmarshal([]byte(v), &js); err != nil {
				t.Errorf("ConfigMap/%s %s: dashboard is not JSON: %v", cm.Name, k, err)
			}
		}
	}
	if dashboards != 1 {
		t.Errorf("%d Grafana dashboard ConfigMaps, want 1", dashboards)
	}
}

func checkMonitoring(t *testing.T, r *rendered, apiPresent bool, components []string) {
	t.Helper()
	want := map[bool]int{true: 1, false: 0}[apiPresent]
	if len(r.svcMonitors) != want || len(r.promRules) != want {
		t.Fatalf("monitoring API present=%v: %d ServiceMonitors and %d PrometheusRules, want %d each",
			apiPresent, len(r.svcMonitors), len(r.promRules), want)
	}
	for _, sm := range r.svcMonitors {
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range r.services {
			if sel.Matches(labels.Set(s.Labels)) {
				n++
				if s.Labels[metricsSvcLabel] != "true" {
					t.Errorf("ServiceMonitor selects non-metrics Service %s", s.Name)
				}
			}
		}
		if n != len(components) {
			t.Errorf("ServiceMonitor selects %d Services, want %d", n, len(components))
		}
		if len(sm.Spec.Endpoints) == 0 || sm.Spec.Endpoints[0].Port == "" {
			t.Error("ServiceMonitor without an endpoint port")
		}
	}
	for _, pr := range r.promRules {
		if len(pr.Spec.Groups) == 0 {
			t.Error("PrometheusRule without groups")
		}
		for _, g := range pr.Spec.Groups {
			if g.Name == "" || len(g.Rules) == 0 {
				t.Errorf("PrometheusRule group %q is empty", g.Name)
			}
			for _, rule := range g.Rules {
				if (rule.Alert == "") == (rule.Record == "") || rule.Expr == "" {
					t.Errorf("PrometheusRule group %q: bad rule %+v", g.Name, rule)
				}
			}
		}
	}
}

// TestValuesRejected checks that bad values fail at install time, not in the cluster.
func TestValuesRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  string
		want string
	}{
		{"unknown top-level key", "nope=1", "additional properties 'nope' not allowed"},
		{"unknown nested key", "fetcher.pdb.minAvalable=1", "additional properties 'minAvalable' not allowed"},
		{"root user", "podSecurityContext.runAsNonRoot=false", "runAsNonRoot"},
		{"two autoscalers", "fetcher.autoscaling.hpa.enabled=true,fetcher.autoscaling.keda.enabled=true", "both enabled"},
		{"non-CRAWLER extra", "config.extra.FOO=1", "FOO"},
		{"rendering with no renderer", "parser.render.mode=auto", "nothing would render them"},
		{"always rendering with no renderer", "parser.render.mode=always", "nothing would render them"},
		{"unknown render mode", "renderer.enabled=true,parser.render.mode=sometimes", "parser.render.mode"},
		{"no tabs", "renderer.enabled=true,renderer.tabs=0", "renderer.tabs"},
		{"renderer with two autoscalers", "renderer.enabled=true,renderer.autoscaling.hpa.enabled=true,renderer.autoscaling.keda.enabled=true", "renderer: autoscaling.hpa and autoscaling.keda are both enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := runHelm(t, "template", releaseName, chartDir, "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("--set %s: err = %v, want one containing %q", tc.set, err, tc.want)
			}
		})
	}
}

// mapKeys are schema paths whose objects are free-form maps (labels, annotations,
// selectors, environment) or pass-through Kubernetes objects (affinity terms): they
// carry a schema for additionalProperties, or are left to the API server.
var mapKeys = map[string]bool{
	"definitions/stringMap":                           true,
	"definitions/envMap":                              true,
	"properties/config/properties/extra":              true,
	"definitions/affinity/properties/nodeAffinity":    true,
	"definitions/affinity/properties/podAffinity":     true,
	"definitions/affinity/properties/podAntiAffinity": true,
}

// TestSchemaClosed walks values.schema.json: every object has additionalProperties
// false, except the free-form maps listed in mapKeys.
func TestSchemaClosed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	objects := 0
	var walk func(path string, node any)
	walk = func(path string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if n["type"] == "object" {
				objects++
				ap, has := n["additionalProperties"]
				if mapKeys[path] {
					if _, ok := n["properties"]; ok {
						t.Errorf("%s: a free-form map with properties", path)
					}
				} else if !has || ap != false {
					t.Errorf("%s: additionalProperties = %v, want false", path, ap)
				}
			}
			for k, v := range n {
				walk(strings.TrimPrefix(path+"/"+k, "/"), v)
			}
		case []any:
			for i, v := range n {
				walk(fmt.Sprintf("%s/%d", path, i), v)
			}
		}
	}
	walk("", schema)
	if objects < 20 {
		t.Errorf("only %d objects in the schema; is it the chart's?", objects)
	}
}

// consumerGroups reads the consumer group and topic of each consuming tier from
// pkg/queue, so the autoscalers follow the code: tier -> {group, topic}.
func consumerGroups(t *testing.T) map[string][2]string {
	t.Helper()
	src, err := os.ReadFile(queueFile)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*((?:Topic|Group)[A-Za-z]+)\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		consts[m[1]] = m[2]
	}
	out := map[string][2]string{}
	for tier, names := range map[string][2]string{
		"fetcher":  {"GroupFetchers", "TopicURLs"},
		"parser":   {"GroupParsers", "TopicPages"},
		"renderer": {"GroupRenderers", "TopicRender"},
	} {
		g, topic := consts[names[0]], consts[names[1]]
		if g == "" || topic == "" {
			t.Fatalf("%s: no %s or %s constant", queueFile, names[0], names[1])
		}
		out[tier] = [2]string{g, topic}
	}
	return out
}

// checkRender checks the render tier against the parsers' setting: the parsers
// send pages to crawl.render (CRAWLER_RENDER=auto or always) exactly when a
// renderer consumes it; the renderer runs the image's browser target while no
// other tier does; its memory limit holds every tab at its heap limit and the
// browser besides; its /tmp (profiles, Chromium's shared memory) is roomy.
func checkRender(t *testing.T, r *rendered, renderer bool) {
	t.Helper()
	var parsers, renderers []workload
	for _, w := range r.workloads() {
		switch component(w) {
		case "parser":
			parsers = append(parsers, w)
		case "renderer":
			renderers = append(renderers, w)
		}
	}
	if renderer != (len(renderers) > 0) {
		t.Errorf("%d renderer workloads, renderer.enabled=%v", len(renderers), renderer)
	}
	for _, p := range parsers {
		c := p.template.Spec.Containers[0]
		mode, ok := envOf(c)[renderEnv]
		switch {
		case !ok:
			t.Errorf("%s/%s: no %s; the parser's default is never in a cluster, say so", p.kind, p.name, renderEnv)
		case renderer && mode.Value != "auto" && mode.Value != "always":
			t.Errorf("%s/%s: %s=%q with a renderer tier; pages needing a browser are parsed unrendered", p.kind, p.name, renderEnv, mode.Value)
		case !renderer && mode.Value != "never":
			t.Errorf("%s/%s: %s=%q with no renderer tier; crawl.render would only grow", p.kind, p.name, renderEnv, mode.Value)
		}
	}
	// One distroless image for every other tier, the browser image apart.
	others := map[string]bool{}
	for _, w := range r.workloads() {
		if component(w) != "renderer" {
			others[w.template.Spec.Containers[0].Image] = true
		}
	}
	if len(others) != 1 {
		t.Errorf("the tiers other than the renderer run %d images %v, want one", len(others), others)
	}
	for _, w := range renderers {
		if img := w.template.Spec.Containers[0].Image; others[img] {
			t.Errorf("%s/%s runs %s, the distroless image of the other tiers; it has no browser", w.kind, w.name, img)
		}
	}
	for _, w := range renderers {
		c := w.template.Spec.Containers[0]
		name := w.kind + "/" + w.name
		env := envOf(c)
		mib := func(k string) int64 {
			n, err := strconv.ParseInt(env[k].Value, 10, 64)
			if err != nil || n <= 0 {
				t.Errorf("%s: %s=%q is not a positive number", name, k, env[k].Value)
			}
			return n
		}
		tabs, heap := mib("CRAWLER_RENDER_TABS"), mib("CRAWLER_RENDER_HEAP_MIB")
		if c.Command[0] != "renderer" {
			t.Errorf("%s: command %v, want the renderer binary", name, c.Command)
		}
		// Every tab at its heap limit, and the idle browser (380 MiB measured).
		floor := resource.MustParse(strconv.FormatInt(tabs*heap+380, 10) + "Mi")
		lim := c.Resources.Limits[corev1.ResourceMemory]
		if lim.Cmp(floor) < 0 {
			t.Errorf("%s: memory limit %s is below %d tabs x %d MiB heap + the browser (%s)", name, lim.String(), tabs, heap, floor.String())
		}
		if req := c.Resources.Requests[corev1.ResourceMemory]; req.Cmp(lim) != 0 {
			t.Errorf("%s: memory request %s, limit %s; want them equal (a node must hold every tab at its limit)", name, req.String(), lim.String())
		}
		for _, v := range w.template.Spec.Volumes {
			if v.Name == "tmp" && (v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Cmp(resource.MustParse("256Mi")) < 0) {
				t.Errorf("%s: /tmp is %+v, want an emptyDir of at least 256Mi (profiles and shared memory)", name, v.EmptyDir)
			}
		}
		if _, ok := env["CRAWLER_LISTEN"]; !ok {
			t.Errorf("%s: no CRAWLER_LISTEN", name)
		}
	}
}

// TestRendererImage: the renderer runs the Dockerfile's renderer target,
// published as the chart's image with a -renderer tag unless given.
func TestRendererImage(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"renderer.enabled=true", "ghcr.io/crawlcluster/crawler:0.1.0-renderer"},
		{"renderer.enabled=true,image.tag=1.2.3", "ghcr.io/crawlcluster/crawler:1.2.3-renderer"},
		{"renderer.enabled=true,image.repository=r.example/c,renderer.image.tagSuffix=-chromium", "r.example/c:0.1.0-chromium"},
		{"renderer.enabled=true,renderer.image.repository=r.example/render,renderer.image.tag=2.0", "r.example/render:2.0"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			t.Parallel()
			r := render(t, "--set", tc.set)
			for _, w := range r.workloads() {
				if component(w) == "renderer" {
					if got := w.template.Spec.Containers[0].Image; got != tc.want {
						t.Errorf("renderer image %q, want %q", got, tc.want)
					}
					return
				}
			}
			t.Error("no renderer rendered")
		})
	}
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}
