/* The pipeline: the stages in their order, from a loaded model to a
 * lowered and planned schedule that the emitters write.
 *
 *   load -> infer -> (calibrate) -> passes -> (tune) -> schedule -> lower -> (threads) -> plan -> emit
 *
 * --max-arena BYTES (main.c): a plan over the budget is made again from the
 * model with the reference kernels (Options.reference_kernels: no packed
 * panels or scratch, no channels-innermost layouts).
 *
 * main.c loads the model (and the --bind values) and emits; the fuzzing
 * harness (tests/fuzz/) runs the same function. Each stage reads the
 * graph the one before left and calls only the layers below the stages
 * (docs/HACKING.md): the core, the engine, the op families and the table. */
#include "ir.h"

/* lower (tiled: the register-tiled kernel variants allowed) and plan */
static int64_t lower_and_plan(Graph *g, Lowering *L, const Options *o, int tiled)
{
    *L = (Lowering){0};
    L->target = o->target;
    L->tiled = tiled;
    L->string_space = o->string_space ? o->string_space : 4096;
    if (o->tune_file) L->tune = tune_load(o->tune_file);
    lower_graph(g, L);
    lower_share_constants(L);
    if (o->fp16) lower_half_constants(g, L);
    if (o->threads > 1) lower_threads(L, o->threads, o->thread_grain);
    return plan_graph(g, L);
}

int64_t pipeline_run(Graph *g, Lowering *L, const Options *o)
{
    g->tiled = target_tiled(o->target) && !o->reference_kernels;   /* the passes decide for the tiled kernels */
    infer_graph(g, o);
    if (o->cuda && graph_has_strings(g))   /* ops/strings.c */
        fail_plain("the model has string tensors, which only the C target supports (strings are a host-side "
                   "feature): use -o OUT.c");
    if (o->int8 || (o->fp16 && (o->calibrate || o->calib_cache))) {
        /* calibrate.c: the float model as a calibrated QDQ model; with
         * --fp16, the layers whose constants stay float32 */
        run_standard_passes(g, o);
        calibrate_graph(g, o);
        if (o->qdq_onnx) emit_onnx(g, o->qdq_onnx);
    }
    run_passes(g, o);
    if (o->tune) tune_graph(g, o);
    schedule_graph(g);
    return lower_and_plan(g, L, o, target_tiled(o->target) && !o->reference_kernels);
}
