package bot

import (
	"testing"

	"github.com/h9-app/h9/workspace/gitrepo"
)

func TestNetworkText(t *testing.T) {
	t.Parallel()
	got := networkText(gitrepo.Network{Allow: []string{"*.corp.test", "10.0.0.5:3000"}, Presets: []string{"packages"}})
	if want := ", network: preset packages, `*.corp.test`, `10.0.0.5:3000`"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := networkText(gitrepo.Network{}); got != ", no network" {
		t.Errorf("empty: %q", got)
	}
}
