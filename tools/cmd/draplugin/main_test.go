package main

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

func claim(uid string, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-" + uid, UID: types.UID(uid)}}
	if results != nil {
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	}
	return c
}

func TestPrepareWritesCDISpecAndUnprepareRemovesIt(t *testing.T) {
	d := &driver{name: "gpu.example.com", kind: "gpu.example.com/gpu", cdiDir: t.TempDir(), pool: "node-1"}
	ours := resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-2"}
	other := resourceapi.DeviceRequestAllocationResult{Request: "nic", Driver: "nic.example.com", Pool: "node-1", Device: "nic-0"}
	elsewhere := resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.example.com", Pool: "node-2", Device: "gpu-0"}
	got, err := d.PrepareResourceClaims(context.Background(), []*resourceapi.ResourceClaim{
		claim("u1", ours, other), claim("u2", elsewhere), claim("u3")})
	if err != nil {
		t.Fatal(err)
	}

	want := []kubeletplugin.Device{{Requests: []string{"gpu"}, PoolName: "node-1", DeviceName: "gpu-2",
		CDIDeviceIDs: []string{"gpu.example.com/gpu=u1-gpu-2"}}}
	if got["u1"].Err != nil || !reflect.DeepEqual(got["u1"].Devices, want) {
		t.Errorf("u1: got %+v, want devices %+v", got["u1"], want)
	}
	var spec cdiSpec
	data, err := os.ReadFile(d.specPath("u1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	wantSpec := cdiSpec{Version: "0.6.0", Kind: "gpu.example.com/gpu", Devices: []cdiDevice{{Name: "u1-gpu-2",
		ContainerEdits: cdiContainerEdits{Env: []string{"GPU_DEVICE_GPU_2=gpu-2", "DRA_CLAIM_UID=u1"}}}}}
	if !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("CDI spec: got %+v, want %+v", spec, wantSpec)
	}
	if got["u2"].Err == nil || got["u3"].Err == nil {
		t.Errorf("a device of another node's pool and an unallocated claim were prepared: %+v, %+v", got["u2"], got["u3"])
	}
	for _, uid := range []types.UID{"u2", "u3"} {
		if _, err := os.Stat(d.specPath(uid)); !os.IsNotExist(err) {
			t.Errorf("a CDI spec for the refused claim %s: %v", uid, err)
		}
	}

	for range 2 { // idempotent: the second call finds nothing to remove
		res, err := d.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: "u1"}})
		if err != nil || res["u1"] != nil {
			t.Fatalf("unprepare: %v, %v", err, res)
		}
		if _, err := os.Stat(d.specPath("u1")); !os.IsNotExist(err) {
			t.Fatalf("the CDI spec is still there after unprepare: %v", err)
		}
	}
}
