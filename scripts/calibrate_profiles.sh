#!/usr/bin/env bash
# Re-fits the calibrated profile values on the calibration halves of the reference tables, in
# order (kernel tables first: end-to-end tables depend on the kernel values), and writes each
# result into hw_profiles/ (scripts/apply_calibration.py). Then rebuild and re-pin:
#   bash scripts/calibrate_profiles.sh && bash scripts/build.sh && python3 scripts/update_validation_pins.py
# Every value this touches names its table in its source comment. The fits minimise the table's
# MAPE (`calibrate --table`'s default objective); values fitted before that objective existed were
# least-squares fits, as their comments say (no "MAPE fit"). Stages can be run alone:
#   bash scripts/calibrate_profiles.sh kernels | end_to_end
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${TRAINSIM:-build/trainsim}
out=$(mktemp -d)
step() {  # step NAME TABLE ROWS FREE...
  local name=$1 table=$2 rows=$3
  shift 3
  local free
  free=$(IFS=,; echo "$*")
  echo "== $name: $table rows '$rows'" >&2
  "$exe" calibrate --table "$table" --rows "$rows" --free "$free" --format json \
    --max-iterations 40 > "$out/$name.json"
  python3 scripts/apply_calibration.py "$out/$name.json"
  cmake --build "${BUILD_DIR:-build}" --target trainsim -j "${JOBS:-2}" > /dev/null
}
grid() {  # grid NAME TABLE ROWS PROFILE KEYS UNIT VALUES...: one value for KEYS, least MAPE
  local name=$1 table=$2 rows=$3 profile=$4 keys=$5 unit=$6
  shift 6
  echo "== $name: $table rows '$rows', $keys over $*" >&2
  local best='' best_mape=''
  for v in "$@"; do
    sed -E -i "s/\"($keys)\": \"[0-9.e+-]+ $unit\"/\"\1\": \"$v $unit\"/" "$profile"
    cmake --build "${BUILD_DIR:-build}" --target trainsim -j "${JOBS:-2}" > /dev/null
    "$exe" validate --table "$table" --points "$out/$name-$v.csv" > /dev/null
    local mape
    mape=$(python3 -c 'import csv, re, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["half"] == "calibration" and re.search(sys.argv[2], r["label"])]
print(sum(abs(float(r["error_pct"])) for r in rows) / len(rows))' "$out/$name-$v.csv" "$rows")
    echo "  $v $unit: MAPE $mape%" >&2
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" "$mape" "$best_mape"; then
      best=$v best_mape=$mape
    fi
  done
  sed -E -i "s/\"($keys)\": \"[0-9.e+-]+ $unit\"/\"\1\": \"$best $unit\"/" "$profile"
  cmake --build "${BUILD_DIR:-build}" --target trainsim -j "${JOBS:-2}" > /dev/null
  echo "  -> $best $unit (MAPE $best_mape%); update the source comments by hand" >&2
}
stage=${1:-all}
if [ "$stage" = all ] || [ "$stage" = kernels ]; then
  # Volta (V100), Pascal (P100, GTX 1080 Ti) and Turing (T4) libraries from DeepBench.
  step volta_gemm32 deepbench_gemm 'v100-sxm2-16gb fp32' kernels/nvidia-volta:compute.gemm.fp32 \
    kernels/nvidia-volta:k_half kernels/nvidia-volta:gemm_tile.half_tile_throughput \
    accelerator/v100-sxm2-16gb:kernel_launch_overhead
  step volta_gemm16 deepbench_gemm 'v100-sxm2-16gb fp16' kernels/nvidia-volta:compute.gemm.fp16
  # Convolutions with their algorithms (fused and nonfused Winograd) and the shares of weight
  # gradients and strided data gradients, together (last run once weight gradients summed their
  # split-K slices apart; the GEMM steps were not rerun then: refitted alone on their table, they
  # pull the shared tile and K-loop values where conv and LSTM fit worse, 27.3% and 30.3%).
  step volta_conv32 deepbench_conv 'v100-sxm2-16gb fp32' kernels/nvidia-volta:compute.conv.fp32 \
    kernels/nvidia-volta:winograd_gain.fp32 kernels/nvidia-volta:conv_weight_gradient.fp32 \
    kernels/nvidia-volta:conv_weight_gradient_input_load.fp32 \
    kernels/nvidia-volta:conv_strided_data_gradient.fp32
  # (Volta's fp16 conv_weight_gradient, freed with these, runs into its bound 1: the profile gives
  # none in fp16.)
  step volta_conv16 deepbench_conv 'v100-sxm2-16gb fp16' kernels/nvidia-volta:compute.conv.fp16 \
    kernels/nvidia-volta:conv_strided_data_gradient.fp16
  step volta_lstm32 deepbench_lstm 'v100-sxm2-16gb fp32' kernels/nvidia-volta:compute.recurrent.fp32
  # (DeepBench's LSTM is cuDNN's skip-input mode: no input GEMM.) Its cells at N <= 32 are bound by
  # re-reading the recurrent weights each step at what the step GEMM's thread blocks draw: that
  # bandwidth with the fp16 efficiency, on both dtypes' rows (freed with them, recurrent.fp32 runs
  # into its bound 1 and keeps the fit above).
  step volta_lstm_stream deepbench_lstm 'v100-sxm2-16gb' \
    kernels/nvidia-volta:recurrent_block_bandwidth kernels/nvidia-volta:compute.recurrent.fp16
fi
if [ "$stage" = all ] || [ "$stage" = kernels ] || [ "$stage" = kernels2 ]; then
  step pascal_gemm deepbench_gemm '(p100-sxm2-16gb|gtx-1080-ti) fp32' \
    kernels/nvidia-pascal:compute.gemm.fp32 kernels/nvidia-pascal:k_half \
    kernels/nvidia-pascal:gemm_tile.half_tile_throughput \
    accelerator/p100-sxm2-16gb:kernel_launch_overhead accelerator/gtx-1080-ti:kernel_launch_overhead
  step pascal_conv deepbench_conv '(p100-sxm2-16gb|gtx-1080-ti) fp32' kernels/nvidia-pascal:compute.conv.fp32 \
    kernels/nvidia-pascal:winograd_gain.fp32 kernels/nvidia-pascal:conv_weight_gradient.fp32 \
    kernels/nvidia-pascal:conv_weight_gradient_input_load.fp32
  # (gemm_tile.narrow_operand.tile is discrete: chosen by hand over the tiles the search tries,
  # 32, 64 and 128, on the same rows' calibration-half MAPE; nvidia-pascal.json lists them.)
  step pascal_lstm deepbench_lstm '(p100-sxm2-16gb|gtx-1080-ti)' \
    kernels/nvidia-pascal:recurrent_block_bandwidth kernels/nvidia-pascal:compute.recurrent.fp32
  # (Turing's k_half, freed with these, runs into its bound 0: the profile holds it there.)
  step turing_gemm deepbench_gemm 't4 ' kernels/nvidia-turing:compute.gemm.fp32 \
    kernels/nvidia-turing:compute.gemm.fp16 \
    kernels/nvidia-turing:gemm_tile.half_tile_throughput accelerator/t4:kernel_launch_overhead
  # (Turing's fused winograd_gain, freed with these, runs below 1 once nonfused Winograd is
  # priced: the profile gives none.)
  step turing_conv32 deepbench_conv 't4 fp32' kernels/nvidia-turing:compute.conv.fp32 \
    kernels/nvidia-turing:conv_weight_gradient.fp32 kernels/nvidia-turing:conv_weight_gradient_input_load.fp32 \
    kernels/nvidia-turing:conv_strided_data_gradient.fp32
  step turing_conv16 deepbench_conv 't4 fp16' kernels/nvidia-turing:compute.conv.fp16 \
    kernels/nvidia-turing:conv_weight_gradient.fp16 kernels/nvidia-turing:conv_strided_data_gradient.fp16
  # (Pascal's conv_strided_data_gradient, freed with pascal_conv's values, runs into its bound 1,
  # with either objective: the profile gives none.)
fi
if [ "$stage" = all ] || [ "$stage" = end_to_end ]; then
  # MXNet's host costs and the Kepler/Maxwell convolutions from the K80/M60 batch sweeps (the
  # small batches are host-bound, the large ones convolution-bound). Maxwell's fused-Winograd gain
  # and weight-gradient share are Pascal's (estimates, hw_profiles/kernels/nvidia-maxwell.json);
  # deepbench_held_out_gpus (Tesla M40, GTX TITAN X) checks them and is fitted on by nothing.
  # (Forward and backward launches overlap the device time of the kernels before them, so they
  # move no row: freed, the forward cost runs to zero. Both stay estimates; the per-parameter
  # update (kvstore push/pull plus the update op) and the per-step cost carry the fixed part.)
  step mxnet mxnet_k80_m60_batch '.' framework/mxnet:host.optimizer_per_kernel framework/mxnet:host.per_step \
    kernels/nvidia-kepler:compute.conv.fp32 kernels/nvidia-maxwell:compute.conv.fp32
  # TF32 convolution efficiencies of the Ampere and Ada parts from Lambda's PyTorch benchmark
  # (fp32 = TF32 convolutions on Ampere and later), on its convolution-bound rows (ResNet-50, SSD).
  # (PyTorch's host costs are hidden behind the device here: freed, forward_per_kernel wanders
  # with a standard error ten times its value, so the host costs stay estimates. The other
  # models carry biases of their own, listed in README 'Known gaps', that a shared efficiency
  # must not absorb.)
  step pytorch_lambda lambda_dp_scaling_fp32 '(resnet50|ssd)' \
    kernels/nvidia-ampere-ga100:compute.conv.tf32 kernels/nvidia-ampere-ga10x:compute.conv.tf32 \
    kernels/nvidia-ada:compute.conv.tf32
  # Large transformer GEMMs of A100 in fp16 from Megatron-LM's sustained runs (its A100 rows; the
  # V100 rows check Volta's DeepBench-fitted values). gemm.bf16 is then set to the same value by
  # hand (the same tensor-core rate; no table here runs A100 GEMMs in bf16).
  step a100_gemm16 megatron 'A100' kernels/nvidia-ampere-ga100:compute.gemm.fp16
  # TF32 GEMMs of A100 from the same table's A100 BERT fine-tuning rows (GEMM-bound; the fitted
  # 0.44 x 156 = 69 TFLOP/s is far above FP32's 19.5 TFLOP/s peak, so these runs' matmuls ran in
  # TF32).
  step a100_gemm_tf32 lambda_dp_scaling_fp32 'A100.*bert' kernels/nvidia-ampere-ga100:compute.gemm.tf32
  # TensorFlow 1's graph executor's host time per kernel, one value for forward, backward and
  # optimizer kernels (calibrate frees parameters one by one, so a grid: the value with the least
  # MAPE over the calibration half's TF GNMT rows, whose nmt.py decoder loop is host-bound: its
  # A100 TF32 and AMP rows measure the same). The rest of dle_training_throughput is fitted on by
  # nothing: it checks these values on other frameworks, precisions and models.
  grid tf_graph_host dle_training_throughput 'TensorFlow/Translation/GNMT' \
    hw_profiles/frameworks/tensorflow_graph.json \
    'forward_per_kernel|backward_per_kernel|optimizer_per_kernel' us 6 12 20 22 24 26 28 36 60
fi
echo "fits in $out" >&2
