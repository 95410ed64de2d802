"""Second accuracy corpus for `carve lint`: compiled functions written like real training code.

Logging and progress printing, `.item()` for metrics, early stopping, `.tolist()` of metrics,
optimizer and scheduler steps, gradient clipping, metric dicts, checkpointing. The cases
were written before `carve lint` was run on them; `ground_truth.py` (the first corpus's
script, pointed at this directory) records what `torch._dynamo.explain` does with each.
The names say what the code does, not what the answer is.
"""

import io
import logging
import math
import os
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

import train_utils
from train_utils import AverageMeter, EarlyStopping, RunLogger, accuracy, format_metrics, log_metrics

logger = logging.getLogger("train")
HISTORY = []
BEST = {"loss": float("inf")}
CONFIG = {"log_interval": 1, "grad_clip": 1.0, "accum_steps": 2, "save_every": 1000}
CHECKPOINT = io.BytesIO()
STATE = {"bad_steps": 0}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


def _batch():
    torch.manual_seed(1)
    return torch.randn(4, 8), torch.randint(0, 3, (4,))


def _model_batch():
    return (_model(), *_batch())


def _with_grads():
    model = _model()
    x, y = _batch()
    F.cross_entropy(model(x), y).backward()
    return model


# ------------------------------------------------------------------ logging the loss
@torch.compile(backend="eager")
def case_step_logs_loss_item(model, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    logger.info("loss=%.4f", loss.item())
    return loss


@torch.compile(backend="eager")
def case_step_prints_fstring_loss(model, x, y):
    loss = F.cross_entropy(model(x), y)
    print(f"train loss {loss.item():.4f}")
    return loss


@torch.compile(backend="eager")
def case_step_prints_every_n_steps(model, x, y, step):
    loss = F.cross_entropy(model(x), y)
    if step % CONFIG["log_interval"] == 0:
        print(f"step {step:5d} | loss {loss:.4f}")
    return loss


@torch.compile(backend="eager")
def case_step_formats_description_string(model, x, y):
    loss = F.cross_entropy(model(x), y)
    description = f"loss {loss:.4f}"
    return loss, description


@torch.compile(backend="eager")
def case_step_stdout_progress(model, x, y, step):
    loss = F.cross_entropy(model(x), y)
    sys.stdout.write(f"\rstep {step} loss {loss.item():.3f}")
    sys.stdout.flush()
    return loss


@torch.compile(backend="eager")
def case_step_logs_through_helper(model, x, y, step):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    log_metrics({"loss": loss, "acc": accuracy(logits, y)}, step)
    return loss


@torch.compile(backend="eager")
def case_step_formats_metrics_helper(model, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    message = format_metrics({"loss": loss, "acc": accuracy(logits, y)})
    return loss, message


@torch.compile(backend="eager")
def case_step_logs_only_on_main_rank(model, x, y):
    loss = F.cross_entropy(model(x), y)
    is_main = int(os.environ.get("RANK", "0")) == 0
    if is_main:
        logger.info("loss %s", loss.detach())
    return loss


@torch.compile(backend="eager")
def case_step_debug_log_of_shapes(model, x, y):
    logger.debug("batch shapes %s %s", tuple(x.shape), tuple(y.shape))
    return F.cross_entropy(model(x), y)


@torch.compile(backend="eager")
def case_step_wandb_style_run_log(model, x, y, run, step):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    run.log({"train/loss": loss.detach(), "train/acc": accuracy(logits, y)}, step=step)
    return loss


@torch.compile(backend="eager")
def case_step_warns_on_nan(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if torch.isnan(loss).any():
        warnings.warn("NaN loss encountered")
    return loss


# ------------------------------------------------------------------ metrics
@torch.compile(backend="eager")
def case_metrics_dict_of_detached_tensors(model, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(dim=-1) == y).float().mean()
    metrics = {"loss": loss.detach(), "acc": acc}
    return loss, metrics


@torch.compile(backend="eager")
def case_metrics_dict_of_python_floats(model, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(dim=-1) == y).float().mean()
    metrics = {"loss": loss.item(), "acc": acc.item()}
    return loss, metrics


@torch.compile(backend="eager")
def case_metrics_comprehension_item(model, x, y):
    logits = model(x)
    metrics = {"loss": F.cross_entropy(logits, y), "acc": accuracy(logits, y)}
    return {name: value.item() for name, value in metrics.items()}


@torch.compile(backend="eager")
def case_metrics_comprehension_detach(model, x, y):
    logits = model(x)
    metrics = {"loss": F.cross_entropy(logits, y), "acc": accuracy(logits, y)}
    return {name: value.detach() for name, value in metrics.items()}


@torch.compile(backend="eager")
def case_per_class_counts_tolist(model, x, y):
    preds = model(x).argmax(dim=-1)
    per_class = torch.stack([((preds == c) & (y == c)).sum() for c in range(3)])
    return per_class.tolist()


@torch.compile(backend="eager")
def case_predictions_to_numpy(model, x):
    preds = model(x).argmax(dim=-1)
    return preds.cpu().numpy()


@torch.compile(backend="eager")
def case_correct_count_item(model, x, y):
    logits = model(x)
    correct = (logits.argmax(1) == y).sum().item()
    return correct / y.numel()


@torch.compile(backend="eager")
def case_running_loss_float(model, x, y):
    running_loss = 0.0
    loss = F.cross_entropy(model(x), y)
    running_loss += float(loss) * x.size(0)
    return loss, running_loss


@torch.compile(backend="eager")
def case_average_meter_with_item(model, x, y, meter):
    loss = F.cross_entropy(model(x), y)
    meter.update(loss.item(), x.size(0))
    return loss


@torch.compile(backend="eager")
def case_average_meter_with_tensor(model, x, y, meter):
    loss = F.cross_entropy(model(x), y)
    meter.update(loss.detach(), x.size(0))
    return loss


@torch.compile(backend="eager")
def case_history_append_item(model, x, y):
    loss = F.cross_entropy(model(x), y)
    HISTORY.append(loss.item())
    return loss


@torch.compile(backend="eager")
def case_history_append_detached(model, x, y):
    loss = F.cross_entropy(model(x), y)
    HISTORY.append(loss.detach())
    return loss


@torch.compile(backend="eager")
def case_topk_accuracy(model, x, y):
    logits = model(x)
    _, pred = logits.topk(2, dim=1)
    correct = pred.eq(y.view(-1, 1)).any(dim=1).float().mean()
    return correct * 100.0


@torch.compile(backend="eager")
def case_topk_accuracy_list_of_floats(model, x, y):
    logits = model(x)
    _, pred = logits.topk(2, dim=1)
    correct = pred.eq(y.view(-1, 1))
    results = []
    for k in (1, 2):
        results.append(correct[:, :k].any(dim=1).float().sum().mul_(100.0 / y.size(0)).item())
    return results


@torch.compile(backend="eager")
def case_confusion_matrix_bincount(model, x, y):
    preds = model(x).argmax(dim=-1)
    return torch.bincount(y * 3 + preds, minlength=9).reshape(3, 3)


@torch.compile(backend="eager")
def case_number_of_classes_seen(model, x, y):
    logits = model(x)
    seen = len(torch.unique(y))
    return logits[:, :seen]


@torch.compile(backend="eager")
def case_rounded_accuracy(model, x, y):
    acc = accuracy(model(x), y)
    return round(acc.item(), 4)


@torch.compile(backend="eager")
def case_math_isfinite_check(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if not math.isfinite(loss):
        raise FloatingPointError("loss is not finite")
    return loss


# ------------------------------------------------------------------ early stopping
@torch.compile(backend="eager")
def case_early_stopping_compare_python_best(model, x, y, best_loss):
    val_loss = F.cross_entropy(model(x), y)
    if val_loss < best_loss:
        best_loss = val_loss
    return val_loss, best_loss


@torch.compile(backend="eager")
def case_early_stopping_torch_where(model, x, y, best_loss):
    val_loss = F.cross_entropy(model(x), y)
    improved = val_loss < best_loss
    best_loss = torch.where(improved, val_loss, best_loss)
    return best_loss, improved


@torch.compile(backend="eager")
def case_early_stopping_object(model, x, y, stopper):
    val_loss = F.cross_entropy(model(x), y)
    should_stop = stopper.step(val_loss)
    return val_loss, should_stop


@torch.compile(backend="eager")
def case_early_stopping_global_counter(model, x, y):
    val_loss = F.cross_entropy(model(x), y)
    if val_loss.item() >= BEST["loss"]:
        STATE["bad_steps"] += 1
    else:
        BEST["loss"] = val_loss.item()
        STATE["bad_steps"] = 0
    return STATE["bad_steps"] >= 3


@torch.compile(backend="eager")
def case_early_stopping_returns_bool(model, x, y, best_loss):
    val_loss = F.cross_entropy(model(x), y)
    return bool(val_loss > best_loss)


@torch.compile(backend="eager")
def case_nan_guard_skips_batch(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if not torch.isfinite(loss):
        print("non-finite loss, skipping batch")
        return None
    return loss


@torch.compile(backend="eager")
def case_assert_loss_finite(model, x, y):
    loss = F.cross_entropy(model(x), y)
    assert torch.isfinite(loss).all(), "loss is not finite"
    return loss


@torch.compile(backend="eager")
def case_check_finite_helper(model, x, y):
    loss = F.cross_entropy(model(x), y)
    return train_utils.check_finite(loss)


# ------------------------------------------------------------------ optimizer, scheduler, gradients
@torch.compile(backend="eager")
def case_full_train_step_with_backward(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()


@torch.compile(backend="eager")
def case_optimizer_step_only(model, optimizer):
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


@torch.compile(backend="eager")
def case_scheduler_step(scheduler):
    scheduler.step()


@torch.compile(backend="eager")
def case_lr_read_from_param_groups(optimizer, x):
    lr = optimizer.param_groups[0]["lr"]
    return x * lr


@torch.compile(backend="eager")
def case_warmup_lr_set_in_param_groups(optimizer, step, x):
    lr = 0.1 * min(1.0, (step + 1) / 100)
    for group in optimizer.param_groups:
        group["lr"] = lr
    return x * lr


@torch.compile(backend="eager")
def case_cosine_lr_python_math(step, x):
    progress = step / 1000
    lr = 0.5 * 0.1 * (1.0 + math.cos(math.pi * progress))
    return x * lr


@torch.compile(backend="eager")
def case_clip_grad_norm(model):
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CONFIG["grad_clip"])
    return total_norm


@torch.compile(backend="eager")
def case_clip_grad_norm_and_warn_if_large(model):
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CONFIG["grad_clip"])
    if total_norm > 10 * CONFIG["grad_clip"]:
        logger.warning("large gradient norm %.2f", total_norm)
    return total_norm


@torch.compile(backend="eager")
def case_grad_norm_helper(model):
    return train_utils.grad_norm(list(model.parameters()))


@torch.compile(backend="eager")
def case_grad_norms_tolist(model):
    norms = torch.stack([p.grad.norm() for p in model.parameters()])
    return norms.tolist()


@torch.compile(backend="eager")
def case_loss_scale_halved_on_overflow(model, scale):
    grads = [p.grad for p in model.parameters()]
    found_inf = torch.stack([torch.isinf(g).any() for g in grads]).any()
    if found_inf:
        scale = scale / 2
    return scale


@torch.compile(backend="eager")
def case_gradient_accumulation_scaling(model, x, y):
    loss = F.cross_entropy(model(x), y)
    return loss / CONFIG["accum_steps"]


@torch.compile(backend="eager")
def case_ema_update(ema_model, model):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(0.99).add_(param, alpha=0.01)


@torch.compile(backend="eager")
def case_label_smoothing_loss(model, x, y):
    logits = model(x)
    targets = train_utils.smooth_labels(y, 3)
    return -(targets * logits.log_softmax(dim=-1)).sum(dim=-1).mean()


# ------------------------------------------------------------------ progress bars, timing, checkpoints
@torch.compile(backend="eager")
def case_tqdm_set_postfix(model, x, y, pbar):
    loss = F.cross_entropy(model(x), y)
    pbar.set_postfix(loss=f"{loss.item():.3f}")
    return loss


@torch.compile(backend="eager")
def case_tqdm_update(model, x, y, pbar):
    loss = F.cross_entropy(model(x), y)
    pbar.update(1)
    return loss


@torch.compile(backend="eager")
def case_timing_with_perf_counter(model, x):
    start = time.perf_counter()
    out = model(x)
    elapsed = time.perf_counter() - start
    return out, elapsed


@torch.compile(backend="eager")
def case_throughput_print(model, x, step, start_time):
    out = model(x)
    samples_per_second = x.size(0) / max(time.time() - start_time, 1e-6)
    print(f"step {step}: {samples_per_second:.1f} samples/s")
    return out


@torch.compile(backend="eager")
def case_checkpoint_on_improvement(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if loss < BEST["loss"]:
        torch.save(model.state_dict(), CHECKPOINT)
    return loss


@torch.compile(backend="eager")
def case_checkpoint_every_n_steps(model, x, y, step):
    loss = F.cross_entropy(model(x), y)
    if step % CONFIG["save_every"] == 0:
        torch.save({"step": step, "model": model.state_dict()}, CHECKPOINT)
    return loss


# ------------------------------------------------------------------ evaluation and the rest
@torch.compile(backend="eager")
def case_eval_under_no_grad(model, x):
    with torch.no_grad():
        logits = model(x)
    return logits.softmax(dim=-1)


@torch.compile(backend="eager")
def case_autocast_forward(model, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    return F.cross_entropy(logits.float(), y)


@torch.compile(backend="eager")
def case_eval_then_train_mode(model, x):
    model.eval()
    out = model(x)
    model.train()
    return out


@torch.compile(backend="eager")
def case_shape_asserts(model, x, y):
    assert x.shape[0] == y.shape[0], "batch size mismatch"
    assert x.dim() == 2
    return F.cross_entropy(model(x), y)


@torch.compile(backend="eager")
def case_loss_string_concatenation_logged(model, x, y):
    loss = F.cross_entropy(model(x), y)
    logger.info("loss " + str(loss))
    return loss


@torch.compile(backend="eager")
def case_early_exit_on_target_accuracy(model, x, y, target):
    acc = accuracy(model(x), y)
    if acc >= target:
        return acc, True
    return acc, False


def _tqdm():
    return tqdm(total=10, disable=True)


INPUTS = {
    "case_step_prints_every_n_steps": lambda: (*_model_batch(), 0),
    "case_step_stdout_progress": lambda: (*_model_batch(), 0),
    "case_step_logs_through_helper": lambda: (*_model_batch(), 0),
    "case_step_wandb_style_run_log": lambda: (*_model_batch(), RunLogger(), 0),
    "case_predictions_to_numpy": lambda: (_model(), _batch()[0]),
    "case_average_meter_with_item": lambda: (*_model_batch(), AverageMeter()),
    "case_average_meter_with_tensor": lambda: (*_model_batch(), AverageMeter()),
    "case_early_stopping_compare_python_best": lambda: (*_model_batch(), 10.0),
    "case_early_stopping_torch_where": lambda: (*_model_batch(), torch.tensor(10.0)),
    "case_early_stopping_object": lambda: (*_model_batch(), EarlyStopping()),
    "case_early_stopping_returns_bool": lambda: (*_model_batch(), 0.5),
    "case_full_train_step_with_backward": lambda: (lambda m: (m, torch.optim.SGD(m.parameters(), lr=0.1), *_batch()))(_model()),
    "case_optimizer_step_only": lambda: (lambda m: (m, torch.optim.SGD(m.parameters(), lr=0.1)))(_with_grads()),
    "case_scheduler_step": lambda: (torch.optim.lr_scheduler.StepLR(torch.optim.SGD(_model().parameters(), lr=0.1), 10),),
    "case_lr_read_from_param_groups": lambda: (torch.optim.SGD(_model().parameters(), lr=0.1), torch.randn(4)),
    "case_warmup_lr_set_in_param_groups": lambda: (torch.optim.SGD(_model().parameters(), lr=0.1), 0, torch.randn(4)),
    "case_cosine_lr_python_math": lambda: (10, torch.randn(4)),
    "case_clip_grad_norm": lambda: (_with_grads(),),
    "case_clip_grad_norm_and_warn_if_large": lambda: (_with_grads(),),
    "case_grad_norm_helper": lambda: (_with_grads(),),
    "case_grad_norms_tolist": lambda: (_with_grads(),),
    "case_loss_scale_halved_on_overflow": lambda: (_with_grads(), 65536.0),
    "case_ema_update": lambda: (_model(), _model()),
    "case_tqdm_set_postfix": lambda: (*_model_batch(), _tqdm()),
    "case_tqdm_update": lambda: (*_model_batch(), _tqdm()),
    "case_timing_with_perf_counter": lambda: (_model(), _batch()[0]),
    "case_throughput_print": lambda: (_model(), _batch()[0], 0, time.time() - 1.0),
    "case_checkpoint_every_n_steps": lambda: (*_model_batch(), 0),
    "case_eval_under_no_grad": lambda: (_model(), _batch()[0]),
    "case_eval_then_train_mode": lambda: (_model(), _batch()[0]),
    "case_early_exit_on_target_accuracy": lambda: (*_model_batch(), 0.9),
}
DEFAULT_INPUTS = _model_batch
