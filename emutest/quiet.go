package emutest

import "github.com/emud-dev/emud/cco"

// QuietAll is cco.Sdma.Quiet toward every peer of its dev comm, the calling
// rank itself included (its loopback queues): when it returns, every put
// and get the caller's scope posted on any queue has landed. Its options
// are Quiet's (the cooperation scope: every member of the group must
// call). MORI's quiet takes one peer; a kernel that puts to many peers
// and then reuses its buffers needs one quiet per peer, which is easy to
// get wrong.
func QuietAll(sdma *cco.Sdma, o ...cco.Option) {
	for p := range sdma.DevComm().LsaSize {
		sdma.Quiet(p, o...)
	}
}
