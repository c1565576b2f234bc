package main

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

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
