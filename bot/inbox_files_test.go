package bot

import (
	"reflect"
	"testing"
)

// A reply's and a mention's files survive the durable inbox between
// replicas (fleet.go): the holder downloads them.
func TestInboxItemsKeepFiles(t *testing.T) {
	t.Parallel()
	files := []sharedFile{{ID: "F1", Name: "shot.png", Type: "image/png", Size: 12, URL: "https://files.slack.com/files-pri/T1-F1/shot.png", Mode: "hosted"}}
	for _, in := range []input{
		msgReply{user: "U1", text: "see", ts: "1.2", files: files},
		msgMention{team: "T1", user: "U1", text: "fix", ts: "1.3", files: files},
	} {
		data, err := encodeItem(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeItem(data)
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Errorf("%T through the inbox = %+v, %v; want %+v", in, got, err, in)
		}
	}
}
