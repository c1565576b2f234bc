package main

import (
	"fmt"
	"maps"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml "github.com/pb33f/go-yaml"
)

func readYAML(t *testing.T, path string, out any) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

type networkPolicy struct {
	Spec struct {
		PolicyTypes []string `yaml:"policyTypes"`
		Egress      []struct {
			To []struct {
				NamespaceSelector *struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"namespaceSelector"`
				PodSelector *struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"podSelector"`
				IPBlock *struct {
					CIDR   string   `yaml:"cidr"`
					Except []string `yaml:"except"`
				} `yaml:"ipBlock"`
			} `yaml:"to"`
			Ports []struct {
				Protocol string `yaml:"protocol"`
				Port     int    `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"egress"`
	} `yaml:"spec"`
}

// The NetworkPolicy restricts what herald's pods reach, not only what
// reaches them (issue 21, finding 7): DNS to kube-dns, Postgres, and
// HTTPS on 443 to public addresses only; every rule names its ports and
// its peers, so none opens everything.
func TestNetworkPolicyEgress(t *testing.T) {
	t.Parallel()
	var np networkPolicy
	readYAML(t, "../../deploy/k8s/networkpolicy.yaml", &np)
	if !slices.Contains(np.Spec.PolicyTypes, "Egress") {
		t.Fatalf("policyTypes %v: egress is not restricted", np.Spec.PolicyTypes)
	}
	allowed := map[string]bool{}
	for i, rule := range np.Spec.Egress {
		if len(rule.To) == 0 || len(rule.Ports) == 0 {
			t.Errorf("egress rule %d allows any peer or any port", i)
		}
		for _, p := range rule.Ports {
			allowed[p.Protocol+"/"+strconv.Itoa(p.Port)] = true
			switch p.Port {
			case 53:
				for _, to := range rule.To {
					if to.PodSelector == nil || to.PodSelector.MatchLabels["k8s-app"] != "kube-dns" ||
						to.NamespaceSelector == nil || to.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "kube-system" {
						t.Errorf("DNS goes to %+v, want kube-dns in kube-system", to)
					}
				}
			case 443:
				for _, to := range rule.To {
					if to.IPBlock == nil || (to.IPBlock.CIDR == "0.0.0.0/0" && !slices.Contains(to.IPBlock.Except, "169.254.0.0/16")) {
						t.Errorf("HTTPS goes to %+v, want public addresses without link-local (cloud metadata)", to)
					}
				}
			case 5432:
				for _, to := range rule.To {
					if to.IPBlock != nil && to.IPBlock.CIDR == "0.0.0.0/0" {
						t.Error("Postgres is open to every address")
					}
				}
			}
		}
	}
	want := map[string]bool{"UDP/53": true, "TCP/53": true, "TCP/5432": true, "TCP/443": true}
	if !maps.Equal(allowed, want) {
		t.Errorf("egress ports %v, want DNS, Postgres and HTTPS only", allowed)
	}
}

var releaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// The Kubernetes manifests run a pinned release, never `latest`: every
// container's image is the one kustomization.yaml pins; base images and
// compose images carry a tag that is not `latest`.
func TestImagesPinned(t *testing.T) {
	t.Parallel()
	var k struct {
		Resources []string `yaml:"resources"`
		Images    []struct {
			Name    string `yaml:"name"`
			NewName string `yaml:"newName"`
			NewTag  string `yaml:"newTag"`
			Digest  string `yaml:"digest"`
		} `yaml:"images"`
	}
	readYAML(t, "../../deploy/k8s/kustomization.yaml", &k)
	pinned := map[string]bool{}
	for _, img := range k.Images {
		if !releaseTag.MatchString(img.NewTag) && !strings.HasPrefix(img.Digest, "sha256:") {
			t.Errorf("kustomization image %s: tag %q, want a release tag vX.Y.Z or a digest", img.Name, img.NewTag)
		}
		pinned[img.Name] = true
	}
	for _, res := range k.Resources {
		b, err := os.ReadFile("../../deploy/k8s/" + res)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^\s*image:\s*(\S+)`).FindAllStringSubmatch(string(b), -1) {
			if !pinned[m[1]] {
				t.Errorf("%s runs image %s, which kustomization.yaml does not pin", res, m[1])
			}
		}
	}
	var compose struct {
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
	}
	readYAML(t, "../../docker-compose.yml", &compose)
	images := map[string]string{} // where → reference
	for name, s := range compose.Services {
		if s.Image != "" {
			images["docker-compose.yml service "+name] = s.Image
		}
	}
	b, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(?:--\S+\s+)*(\S+)`).FindAllStringSubmatch(string(b), -1) {
		images["deploy/Dockerfile FROM "+m[1]] = m[1]
	}
	if len(images) < 3 {
		t.Fatalf("found only %v", images)
	}
	for where, ref := range images {
		_, tag, ok := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
		tag, _, _ = strings.Cut(tag, "@")
		if !ok || tag == "" || tag == "latest" {
			t.Errorf("%s: image %s has no tag or latest", where, ref)
		}
	}
}

// Compose has no default Postgres password: every use of
// POSTGRES_PASSWORD requires it, and deploy/README.md's compose steps
// set it before the first `docker compose`.
func TestComposeRequiresPostgresPassword(t *testing.T) {
	t.Parallel()
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
		Herald struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"x-herald"`
	}
	text := readYAML(t, "../../docker-compose.yml", &compose)
	const required = "${POSTGRES_PASSWORD:?"
	if got := compose.Services["postgres"].Environment["POSTGRES_PASSWORD"]; !strings.HasPrefix(got, required) {
		t.Errorf("postgres's POSTGRES_PASSWORD is %q, want it required", got)
	}
	if got := compose.Herald.Environment["DATABASE_URL"]; !strings.Contains(got, ":"+required) {
		t.Errorf("herald's DATABASE_URL is %q, want the required password", got)
	}
	if n, m := strings.Count(text, "${POSTGRES_PASSWORD"), strings.Count(text, required); n != m {
		t.Errorf("%d uses of POSTGRES_PASSWORD, %d of them required", n, m)
	}
	b, err := os.ReadFile("../../deploy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Docker Compose")
	section, _, _ = strings.Cut(section, "\n## ")
	set := false
	for _, line := range fenced(section, "sh") {
		if strings.Contains(line, "POSTGRES_PASSWORD=") {
			set = true
		}
		if strings.HasPrefix(line, "docker compose") {
			if !set {
				t.Errorf("deploy/README.md runs %q before setting POSTGRES_PASSWORD", line)
			}
			break
		}
	}
}

// k8sDeployment and k8sService are the parts of them the tests read.
type k8sDeployment struct {
	Spec struct {
		Replicas int `yaml:"replicas"`
		Strategy struct {
			Type          string `yaml:"type"`
			RollingUpdate struct {
				MaxUnavailable any `yaml:"maxUnavailable"`
			} `yaml:"rollingUpdate"`
		} `yaml:"strategy"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Name  string `yaml:"name"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Lifecycle struct {
						PreStop struct {
							Sleep struct {
								Seconds int `yaml:"seconds"`
							} `yaml:"sleep"`
						} `yaml:"preStop"`
					} `yaml:"lifecycle"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sService struct {
	Spec struct {
		Type     string            `yaml:"type"`
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// selects reports whether every label of selector is on the pod.
func selects(selector, pod map[string]string) bool {
	for k, v := range selector {
		if pod[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// The Deployment runs several processes on the token (issue 22): three
// replicas rolled one at a time, a PodDisruptionBudget keeping two, the
// interactions port behind a Service of its own and the admin port behind
// another that stays internal, and a grace period above the preStop pause
// plus HERALD_SHUTDOWN_TIMEOUT.
func TestDeployKubernetesScaled(t *testing.T) {
	t.Parallel()
	var k struct {
		Resources []string `yaml:"resources"`
	}
	readYAML(t, "../../deploy/k8s/kustomization.yaml", &k)
	for _, res := range []string{"deployment.yaml", "service.yaml", "interactions-service.yaml", "pdb.yaml", "networkpolicy.yaml"} {
		if !slices.Contains(k.Resources, res) {
			t.Errorf("kustomization.yaml does not apply %s", res)
		}
	}
	var d k8sDeployment
	readYAML(t, "../../deploy/k8s/deployment.yaml", &d)
	if d.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", d.Spec.Replicas)
	}
	if s := d.Spec.Strategy; s.Type != "RollingUpdate" || s.RollingUpdate.MaxUnavailable != 1 {
		t.Errorf("strategy %+v, want RollingUpdate with maxUnavailable 1", s)
	}
	pod := d.Spec.Template.Metadata.Labels
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want herald alone", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, "../../deploy/k8s/configmap.yaml", &cm)
	for setting, name := range map[string]string{"HERALD_HTTP_ADDR": "admin", "HERALD_INTERACTIONS_ADDR": "interactions"} {
		_, port, err := net.SplitHostPort(cm.Data[setting])
		if err != nil || port != strconv.Itoa(ports[name]) || ports[name] == 0 {
			t.Errorf("%s is %q, want the container port named %s (%d)", setting, cm.Data[setting], name, ports[name])
		}
	}
	shutdown, err := time.ParseDuration(cm.Data["HERALD_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatalf("HERALD_SHUTDOWN_TIMEOUT: %v", err)
	}
	grace := time.Duration(d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if pause := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second; grace <= pause+shutdown {
		t.Errorf("terminationGracePeriodSeconds %s, want more than the preStop pause %s plus HERALD_SHUTDOWN_TIMEOUT %s", grace, pause, shutdown)
	}

	var ints, admin k8sService
	readYAML(t, "../../deploy/k8s/interactions-service.yaml", &ints)
	readYAML(t, "../../deploy/k8s/service.yaml", &admin)
	if !selects(ints.Spec.Selector, pod) || len(ints.Spec.Ports) != 1 || ints.Spec.Ports[0].TargetPort != "interactions" {
		t.Errorf("interactions Service selects %v and targets %+v, want the bot's pods on the port named interactions", ints.Spec.Selector, ints.Spec.Ports)
	}
	if !selects(admin.Spec.Selector, pod) || admin.Spec.Type != "ClusterIP" {
		t.Errorf("admin Service selects %v as %q, want the bot's pods, ClusterIP", admin.Spec.Selector, admin.Spec.Type)
	}
	for _, p := range admin.Spec.Ports {
		if p.TargetPort != "admin" {
			t.Errorf("the admin Service exposes %v: keep it to the admin port", p.TargetPort)
		}
	}

	var pdb struct {
		Kind string `yaml:"kind"`
		Spec struct {
			MinAvailable any `yaml:"minAvailable"`
			Selector     struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
		} `yaml:"spec"`
	}
	readYAML(t, "../../deploy/k8s/pdb.yaml", &pdb)
	if pdb.Kind != "PodDisruptionBudget" || pdb.Spec.MinAvailable != 2 || !selects(pdb.Spec.Selector.MatchLabels, pod) {
		t.Errorf("pdb.yaml: %s minAvailable %v selecting %v, want a PodDisruptionBudget keeping 2 of the bot's pods", pdb.Kind, pdb.Spec.MinAvailable, pdb.Spec.Selector.MatchLabels)
	}
}

// Ingress reaches herald on its named ports only: the admin port from
// Prometheus's namespace, the interactions port from the load balancer.
func TestNetworkPolicyIngress(t *testing.T) {
	t.Parallel()
	var np struct {
		Spec struct {
			PolicyTypes []string `yaml:"policyTypes"`
			Ingress     []struct {
				From []struct {
					NamespaceSelector *struct {
						MatchLabels map[string]string `yaml:"matchLabels"`
					} `yaml:"namespaceSelector"`
				} `yaml:"from"`
				Ports []struct {
					Protocol string `yaml:"protocol"`
					Port     any    `yaml:"port"`
				} `yaml:"ports"`
			} `yaml:"ingress"`
		} `yaml:"spec"`
	}
	readYAML(t, "../../deploy/k8s/networkpolicy.yaml", &np)
	var d k8sDeployment
	readYAML(t, "../../deploy/k8s/deployment.yaml", &d)
	named := map[any]bool{}
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		named[p.Name] = true
	}
	if !slices.Contains(np.Spec.PolicyTypes, "Ingress") {
		t.Fatalf("policyTypes %v: ingress is not restricted", np.Spec.PolicyTypes)
	}
	open := map[any]bool{}
	for i, rule := range np.Spec.Ingress {
		if len(rule.Ports) == 0 {
			t.Errorf("ingress rule %d allows every port", i)
		}
		for _, p := range rule.Ports {
			if !named[p.Port] || p.Protocol != "TCP" {
				t.Errorf("ingress rule %d opens %s %v, not a port the bot's container names", i, p.Protocol, p.Port)
			}
			open[p.Port] = true
			if p.Port == "admin" && (len(rule.From) == 0 || rule.From[0].NamespaceSelector == nil ||
				rule.From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring") {
				t.Errorf("the admin port is open to %+v, want the monitoring namespace only", rule.From)
			}
		}
	}
	if !open["admin"] || !open["interactions"] {
		t.Errorf("ingress opens %v, want admin and interactions", open)
	}
}

// `docker compose up --scale herald=3` works: the herald service names no
// container and binds no fixed host port, and the interactions front
// spreads the endpoint over every replica by the service's DNS name.
func TestComposeScales(t *testing.T) {
	t.Parallel()
	type service struct {
		ContainerName string            `yaml:"container_name"`
		Ports         []any             `yaml:"ports"`
		Environment   map[string]string `yaml:"environment"`
		Volumes       []string          `yaml:"volumes"`
	}
	var compose struct {
		Services map[string]service `yaml:"services"`
	}
	text := readYAML(t, "../../docker-compose.yml", &compose)
	herald, ok := compose.Services["herald"]
	if !ok {
		t.Fatal("no herald service")
	}
	if herald.ContainerName != "" {
		t.Errorf("herald has container_name %q: two replicas cannot share it", herald.ContainerName)
	}
	for _, p := range herald.Ports {
		if host := hostPort(p); host != "" {
			t.Errorf("herald publishes %v on host port %s: a second replica could not bind it", p, host)
		}
	}
	_, port, err := net.SplitHostPort(herald.Environment["HERALD_INTERACTIONS_ADDR"])
	if err != nil {
		t.Fatalf("herald's HERALD_INTERACTIONS_ADDR: %v", err)
	}
	front, ok := compose.Services["interactions"]
	if !ok {
		t.Fatal("no interactions service in front of the replicas")
	}
	var caddyfile string
	for _, v := range front.Volumes {
		if src, _, ok := strings.Cut(v, ":"); ok && strings.HasSuffix(src, ".Caddyfile") {
			caddyfile = src
		}
	}
	b, err := os.ReadFile("../../" + caddyfile)
	if err != nil {
		t.Fatalf("the interactions front's Caddyfile %q: %v", caddyfile, err)
	}
	if !regexp.MustCompile(`(?m)^\s*dynamic a herald `+port+`\b`).Match(b) || !strings.Contains(string(b), "lb_policy round_robin") {
		t.Errorf("%s does not spread requests round-robin over every herald replica's port %s", caddyfile, port)
	}
	readme, err := os.ReadFile("../../deploy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for where, doc := range map[string]string{"docker-compose.yml": text, "deploy/README.md": string(readme)} {
		if !strings.Contains(doc, "docker compose up -d --scale herald=3") {
			t.Errorf("%s does not show `docker compose up -d --scale herald=3`", where)
		}
	}
}

// hostPort is the host port a compose port entry binds, "" when Docker
// picks one.
func hostPort(p any) string {
	switch p := p.(type) {
	case map[string]any:
		if v, ok := p["published"]; ok {
			return strings.TrimSpace(fmt.Sprint(v))
		}
		return ""
	default:
		s, _, _ := strings.Cut(fmt.Sprint(p), "/")
		parts := strings.Split(s, ":") // [[ip:]host:]container
		if len(parts) < 2 {
			return ""
		}
		return parts[len(parts)-2]
	}
}
