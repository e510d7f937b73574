package main

// Feature labels: what Node Feature Discovery and NVIDIA's GPU Feature
// Discovery put on a real GPU node (--feature-labels N). A node running both
// carries a couple of hundred labels, most of them
// feature.node.kubernetes.io/cpu-cpuid.*; the API server returns them sorted
// by key, so labels such as node.kubernetes.io/exclude-from-migration or
// nvidia.com/* come after every feature.node.kubernetes.io/* one. Selectors
// must read all of them.

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The x86 CPUID flags NFD labels on a recent server CPU.
var cpuidFlags = []string{
	"ADX", "AESNI", "AMXBF16", "AMXFP16", "AMXINT8", "AMXTILE", "AVX", "AVX2", "AVX512BF16", "AVX512BITALG",
	"AVX512BW", "AVX512CD", "AVX512DQ", "AVX512F", "AVX512FP16", "AVX512IFMA", "AVX512VBMI", "AVX512VBMI2",
	"AVX512VL", "AVX512VNNI", "AVX512VPOPCNTDQ", "AVXIFMA", "AVXNECONVERT", "AVXVNNI", "AVXVNNIINT8", "BHI_CTRL",
	"BMI1", "BMI2", "CETIBT", "CETSS", "CLDEMOTE", "CLMUL", "CLWB", "CMPCCXADD", "CMPXCHG8", "CX16", "ERMS",
	"F16C", "FLUSH_L1D", "FMA3", "FSRM", "FXSR", "FXSROPT", "GFNI", "HLE", "HRESET", "HYPERVISOR",
	"IA32_ARCH_CAP", "IA32_CORE_CAP", "IBPB", "IBRS", "IBRS_PREFERRED", "IDPRED_CTRL", "LAHF", "LZCNT",
	"MD_CLEAR", "MMX", "MOVBE", "MOVDIR64B", "MOVDIRI", "MSRLIST", "NX", "OSXSAVE", "PCONFIG", "POPCNT",
	"PREFETCHI", "PSFD", "RDPRU", "RDRAND", "RDSEED", "RDTSCP", "RRSBA_CTRL", "RTM", "SCE", "SERIALIZE", "SHA",
	"SPEC_CTRL_SSBD", "SSE", "SSE2", "SSE3", "SSE4", "SSE42", "SSSE3", "STIBP", "STIBP_ALWAYSON", "SYSCALL",
	"SYSEE", "TSXLDTRK", "VAES", "VMX", "VPCLMULQDQ", "WAITPKG", "WBNOINVD", "WRMSRNS", "X87", "XGETBV1", "XSAVE",
	"XSAVEC", "XSAVEOPT", "XSAVES",
}

// The GPU vendor's (10de), the NICs' (15b3) and the platform's (8086) PCI devices.
var pciVendors = []string{"0200_15b3", "0300_10de", "0302_10de", "0600_8086", "0880_8086", "0b40_8086"}

// featureLabels returns n labels in the style of NFD and GFD for a node with
// devices GPUs: GFD's first (gpu.product, gpu.count, gpu.memory,
// gpu.replicas, mig.strategy, ...), then NFD's (cpuid, pci, kernel, os), then
// numbered NFD custom-rule labels until there are n.
func featureLabels(n int, model, memory string, devices int) map[string]string {
	mib := "0"
	if q, err := resource.ParseQuantity(memory); err == nil {
		mib = strconv.FormatInt(q.Value()>>20, 10)
	}
	type kv struct{ k, v string }
	const nfd = "feature.node.kubernetes.io/"
	all := []kv{
		{"nvidia.com/gpu.product", model},
		{"nvidia.com/gpu.count", strconv.Itoa(devices)},
		{"nvidia.com/gpu.memory", mib},
		{"nvidia.com/gpu.replicas", "1"},
		{"nvidia.com/gpu.sharing-strategy", "none"},
		{"nvidia.com/mig.strategy", "single"},
		{"nvidia.com/mig.capable", "false"},
		{"nvidia.com/gpu.present", "true"},
		{"nvidia.com/gpu.family", "ampere"},
		{"nvidia.com/gpu.compute.major", "8"},
		{"nvidia.com/gpu.compute.minor", "0"},
		{"nvidia.com/gpu.machine", "fleetsim"},
		{"nvidia.com/cuda.driver.major", "550"},
		{"nvidia.com/cuda.driver.minor", "54"},
		{"nvidia.com/cuda.driver.rev", "15"},
		{"nvidia.com/cuda.runtime.major", "12"},
		{"nvidia.com/cuda.runtime.minor", "4"},
		{"nvidia.com/gfd.timestamp", "1735689600"},
		{nfd + "cpu-hardware_multithreading", "true"},
		{nfd + "cpu-model.family", "6"},
		{nfd + "cpu-model.id", "143"},
		{nfd + "cpu-model.vendor_id", "Intel"},
		{nfd + "cpu-pstate.status", "active"},
		{nfd + "cpu-pstate.turbo", "true"},
		{nfd + "kernel-version.full", "6.1.0-fleetsim"},
		{nfd + "kernel-version.major", "6"},
		{nfd + "kernel-version.minor", "1"},
		{nfd + "kernel-version.revision", "0"},
		{nfd + "memory-numa", "true"},
		{nfd + "network-sriov.capable", "true"},
		{nfd + "storage-nonrotationaldisk", "true"},
		{nfd + "system-os_release.ID", "debian"},
		{nfd + "system-os_release.VERSION_ID", "12"},
	}
	for _, f := range cpuidFlags {
		all = append(all, kv{nfd + "cpu-cpuid." + f, "true"})
	}
	for _, p := range pciVendors {
		all = append(all, kv{nfd + "pci-" + p + ".present", "true"})
	}
	labels := make(map[string]string, n)
	for i := 0; len(labels) < n; i++ {
		if i < len(all) {
			labels[all[i].k] = all[i].v
		} else {
			labels[fmt.Sprintf("%srule-%03d.present", nfd, i-len(all))] = "true"
		}
	}
	return labels
}
