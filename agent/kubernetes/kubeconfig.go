package kubernetes

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// kubeconfig is the part of a kubeconfig file (kubectl's) that says how
// to reach its current context's cluster as its user.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
			TLSServerName            string `yaml:"tls-server-name"`
			ProxyURL                 string `yaml:"proxy-url"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			ClientCertificate     string `yaml:"client-certificate"`
			ClientCertificateData string `yaml:"client-certificate-data"`
			ClientKey             string `yaml:"client-key"`
			ClientKeyData         string `yaml:"client-key-data"`
			Token                 string `yaml:"token"`
			TokenFile             string `yaml:"tokenFile"`
			Exec                  any    `yaml:"exec"`
			AuthProvider          any    `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// maxKubeconfig bounds what is read of a kubeconfig or a file it names.
const maxKubeconfig = 4 << 20

// clusterOf reads the kubeconfig file at path — or, when path is empty,
// the service account of the pod the server runs in.
func clusterOf(path string) (clusterConfig, error) {
	if path == "" {
		cfg, err := inCluster()
		if err != nil {
			return cfg, fmt.Errorf("%s is empty and the server is not in a cluster (%v): set it to a kubeconfig file", KubeconfigSetting.Key, err)
		}
		return cfg, nil
	}
	cfg, err := fromKubeconfig(path)
	if err != nil {
		return cfg, fmt.Errorf("%s %s: %w", KubeconfigSetting.Key, path, err)
	}
	return cfg, nil
}

func fromKubeconfig(path string) (clusterConfig, error) {
	b, err := readSmall(path)
	if err != nil {
		return clusterConfig{}, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return clusterConfig{}, fmt.Errorf("not a kubeconfig: %w", err)
	}
	if kc.CurrentContext == "" {
		return clusterConfig{}, errors.New("it names no current-context")
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return clusterConfig{}, fmt.Errorf("its current-context %q is not among its contexts", kc.CurrentContext)
	}
	// Files a kubeconfig names are relative to it, as kubectl reads them.
	dir := filepath.Dir(path)
	file := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	var cfg clusterConfig
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cl := c.Cluster
		cfg.Server, cfg.Insecure, cfg.ServerName, cfg.Proxy = cl.Server, cl.InsecureSkipTLSVerify, cl.TLSServerName, cl.ProxyURL
		if cfg.CA, err = dataOrFile("certificate-authority", cl.CertificateAuthorityData, file(cl.CertificateAuthority)); err != nil {
			return cfg, err
		}
	}
	if !found {
		return cfg, fmt.Errorf("its context %q names cluster %q, which it does not hold", kc.CurrentContext, clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		us := u.User
		// helix-org runs no program a kubeconfig names: that would be code
		// of the file's choosing running as the server.
		if us.Exec != nil || us.AuthProvider != nil {
			return cfg, fmt.Errorf("user %q authenticates through an exec plugin or auth provider, which helix-org does not run: give it a client certificate or a token", userName)
		}
		if cfg.CertPEM, err = dataOrFile("client-certificate", us.ClientCertificateData, file(us.ClientCertificate)); err != nil {
			return cfg, err
		}
		if cfg.KeyPEM, err = dataOrFile("client-key", us.ClientKeyData, file(us.ClientKey)); err != nil {
			return cfg, err
		}
		cfg.Token, cfg.TokenFile = us.Token, file(us.TokenFile)
	}
	return cfg, nil
}

// dataOrFile is a kubeconfig's inline base64 value (its -data key), or
// else the file it names.
func dataOrFile(key, data, path string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%s-data: %w", key, err)
		}
		return b, nil
	}
	if path == "" {
		return nil, nil
	}
	b, err := readSmall(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return b, nil
}

// serviceAccount is where a pod finds its service account.
const serviceAccount = "/var/run/secrets/kubernetes.io/serviceaccount"

// inCluster is the cluster the server's own pod runs in, as its service
// account reaches it.
func inCluster() (clusterConfig, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return clusterConfig{}, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	tokenFile := filepath.Join(serviceAccount, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return clusterConfig{}, err
	}
	ca, err := readSmall(filepath.Join(serviceAccount, "ca.crt"))
	if err != nil {
		return clusterConfig{}, err
	}
	return clusterConfig{Server: "https://" + net.JoinHostPort(host, port), CA: ca, TokenFile: tokenFile}, nil
}

// readSmall reads a file of a few KiB, refusing one past maxKubeconfig.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKubeconfig+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKubeconfig {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, maxKubeconfig>>20)
	}
	return b, nil
}
