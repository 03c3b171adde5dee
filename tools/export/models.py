# tools/export/models.py — Loom's model zoo: small-but-real builders for the export tools.
"""Builders for the six reference architectures Loom is tested and benchmarked on: ResNet-50 and
ViT-B/16 (torchvision), and GPT-2, BERT, LLaMA and a mixture-of-experts decoder written here in
plain PyTorch. Every builder takes size knobs; `ZOO` names a `small` config per model (exports in
seconds, used by tests) and a `standard` config (the published size where one exists).

All models are built with random weights from a fixed seed (no downloads), in eval mode, and use
only plain tensor ops (matmul, softmax, masked_fill, topk, scatter, ...) so that they trace with
torch.fx and export to ONNX opset 17 with static shapes. Nothing here has data-dependent shapes:
the MoE layer uses dense dispatch (every expert runs on every token, gated by a [T, E] matrix).
"""

import dataclasses
import math
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ZOO", "ModelSpec", "build", "example_inputs", "gpt2", "bert", "llama", "moe",
           "resnet50", "vit_b_16"]


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------

def _init_transformer_(model: nn.Module, std: float = 0.02) -> None:
    """GPT-2-style init, plus non-trivial biases and norm weights so that a swapped or dropped
    weight in an importer changes the outputs."""
    for mod in model.modules():
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, 0.0, std)
            if getattr(mod, "bias", None) is not None:
                nn.init.normal_(mod.bias, 0.0, std)
        elif isinstance(mod, (nn.LayerNorm, RMSNorm)):
            with torch.no_grad():
                mod.weight.copy_(1.0 + 0.1 * torch.randn_like(mod.weight))
                if getattr(mod, "bias", None) is not None:
                    mod.bias.normal_(0.0, 0.1)


def _perturb_torchvision_(model: nn.Module) -> None:
    """torchvision's init leaves norms at identity and some heads at zero (ViT's classifier is
    all zeros); give them random values so that reference outputs exercise every weight."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.BatchNorm2d, nn.LayerNorm)):
                if mod.weight is not None:
                    mod.weight.copy_(1.0 + 0.1 * torch.randn_like(mod.weight))
                    mod.bias.normal_(0.0, 0.1)
                if isinstance(mod, nn.BatchNorm2d):
                    mod.running_mean.normal_(0.0, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)
        for p in model.parameters():
            if p.dim() >= 1 and not bool(p.any()):
                p.normal_(0.0, 0.02)


class RMSNorm(nn.Module):
    """RMSNorm computed from primitive ops (pow, mean, rsqrt, mul), as LLaMA writes it."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


# --------------------------------------------------------------------------------------------
# GPT-2: token + position embedding, pre-LN blocks, causal attention via matmul/softmax.
# --------------------------------------------------------------------------------------------

class GPT2Attention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_positions: int, dropout: float):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        mask = torch.tril(torch.ones(n_positions, n_positions, dtype=torch.bool))
        self.register_buffer("causal_mask", mask.view(1, 1, n_positions, n_positions),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(~self.causal_mask[:, :, :T, :T], float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class GPT2MLP(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__()
        self.c_fc = nn.Linear(d_model, d_ff)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, n_positions, eps, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, eps=eps)
        self.attn = GPT2Attention(d_model, n_heads, n_positions, dropout)
        self.ln_2 = nn.LayerNorm(d_model, eps=eps)
        self.mlp = GPT2MLP(d_model, d_ff, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab_size=50257, n_positions=1024, d_model=768, n_layers=12, n_heads=12,
                 d_ff=None, tie_weights=True, eps=1e-5, dropout=0.1):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(n_positions, d_model)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(GPT2Block(d_model, n_heads, d_ff, n_positions, eps, dropout)
                               for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model, eps=eps)
        self.tie_weights = tie_weights
        self.lm_head = None if tie_weights else nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        pos = torch.arange(T, dtype=torch.long, device=input_ids.device)
        x = self.drop(self.wte(input_ids) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        if self.tie_weights:
            return F.linear(x, self.wte.weight)
        return self.lm_head(x)


def gpt2(**kw) -> nn.Module:
    """GPT-2 (defaults: GPT-2 small, 124M parameters with the tied LM head)."""
    model = GPT2(**kw)
    _init_transformer_(model)
    return model


# --------------------------------------------------------------------------------------------
# BERT: post-LN encoder with token-type embeddings and an optional attention mask input.
# --------------------------------------------------------------------------------------------

class BertSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, x, B, T):
        return x.view(B, T, self.n_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias: Optional[torch.Tensor]):
        B, T, C = x.size()
        q = self._heads(self.query(x), B, T)
        k = self._heads(self.key(x), B, T)
        v = self._heads(self.value(x), B, T)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if mask_bias is not None:
            scores = scores + mask_bias
        probs = self.dropout(torch.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.reshape(B, T, C)


class BertLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, eps, dropout):
        super().__init__()
        self.attention = BertSelfAttention(d_model, n_heads, dropout)
        self.attn_output = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.attn_norm = nn.LayerNorm(d_model, eps=eps)
        self.intermediate = nn.Linear(d_model, d_ff)
        self.output = nn.Linear(d_ff, d_model)
        self.out_dropout = nn.Dropout(dropout)
        self.out_norm = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, mask_bias: Optional[torch.Tensor]):
        a = self.attn_dropout(self.attn_output(self.attention(x, mask_bias)))
        x = self.attn_norm(x + a)
        h = self.out_dropout(self.output(F.gelu(self.intermediate(x))))
        return self.out_norm(x + h)


class Bert(nn.Module):
    def __init__(self, vocab_size=30522, max_positions=512, type_vocab_size=2, d_model=768,
                 n_layers=12, n_heads=12, d_ff=3072, eps=1e-12, dropout=0.1):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model)
        self.position_embeddings = nn.Embedding(max_positions, d_model)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, d_model)
        self.emb_norm = nn.LayerNorm(d_model, eps=eps)
        self.emb_dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(BertLayer(d_model, n_heads, d_ff, eps, dropout)
                                    for _ in range(n_layers))

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        T = input_ids.shape[1]
        pos = torch.arange(T, dtype=torch.long, device=input_ids.device)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(pos)
             + self.token_type_embeddings(token_type_ids))
        x = self.emb_dropout(self.emb_norm(x))
        mask_bias = None
        if attention_mask is not None:
            # [B, T] of 1 (attend) / 0 (padding) -> additive [B, 1, 1, T] bias.
            mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def bert(**kw) -> nn.Module:
    """BERT encoder (defaults: BERT-base, 110M parameters, no pooler); returns hidden states."""
    model = Bert(**kw)
    _init_transformer_(model)
    return model


# --------------------------------------------------------------------------------------------
# LLaMA: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU, no biases.
# --------------------------------------------------------------------------------------------

def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, max_seq, rope_theta):
        super().__init__()
        assert d_model % n_heads == 0 and n_heads % n_kv_heads == 0
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = d_model // n_heads
        self.wq = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, d_model, bias=False)
        inv_freq = 1.0 / (rope_theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_seq).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("rope_cos", emb.cos(), persistent=False)
        self.register_buffer("rope_sin", emb.sin(), persistent=False)
        mask = torch.full((max_seq, max_seq), float("-inf")).triu(1)
        self.register_buffer("causal_bias", mask, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        rep = self.n_heads // self.n_kv_heads
        k = k[:, :, None].expand(B, self.n_kv_heads, rep, T, self.head_dim)
        k = k.reshape(B, self.n_heads, T, self.head_dim)
        v = v[:, :, None].expand(B, self.n_kv_heads, rep, T, self.head_dim)
        v = v.reshape(B, self.n_heads, T, self.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + self.causal_bias[:T, :T]
        out = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.wo(out.transpose(1, 2).reshape(B, T, -1))


class LlamaMLP(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, d_ff, max_seq, eps, rope_theta):
        super().__init__()
        self.attention_norm = RMSNorm(d_model, eps)
        self.attention = LlamaAttention(d_model, n_heads, n_kv_heads, max_seq, rope_theta)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.feed_forward = LlamaMLP(d_model, d_ff)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, vocab_size=49152, d_model=576, n_layers=30, n_heads=9, n_kv_heads=3,
                 d_ff=1536, max_seq=2048, eps=1e-5, rope_theta=10000.0, tie_weights=True):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList(
            LlamaBlock(d_model, n_heads, n_kv_heads, d_ff, max_seq, eps, rope_theta)
            for _ in range(n_layers))
        self.norm = RMSNorm(d_model, eps)
        self.tie_weights = tie_weights
        self.output = None if tie_weights else nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, input_ids):
        x = self.tok_embeddings(input_ids)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        if self.tie_weights:
            return F.linear(x, self.tok_embeddings.weight)
        return self.output(x)


def llama(**kw) -> nn.Module:
    """LLaMA-style decoder (defaults: the SmolLM2-135M shape, a published Llama-architecture
    model with GQA: 30 layers, d 576, 9 heads, 3 KV heads, SwiGLU 1536, tied embeddings)."""
    model = Llama(**kw)
    _init_transformer_(model)
    return model


# --------------------------------------------------------------------------------------------
# MoE: a decoder whose FFN is a top-2 mixture of SwiGLU experts, dense (static-shape) dispatch.
# --------------------------------------------------------------------------------------------

class MoEFeedForward(nn.Module):
    """Router linear -> softmax -> top-k -> gates scattered into a [T, E] matrix; every expert
    runs on every token (stacked weights [E, H, F] and [E, F, H], batched matmul) and the
    results are combined with the gates. Static shapes throughout: no nonzero/index_select."""

    def __init__(self, d_model, d_ff, n_experts, top_k=2):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.w1 = nn.Parameter(torch.empty(n_experts, d_model, d_ff))
        self.w3 = nn.Parameter(torch.empty(n_experts, d_model, d_ff))
        self.w2 = nn.Parameter(torch.empty(n_experts, d_ff, d_model))
        for w in (self.w1, self.w3, self.w2):
            nn.init.normal_(w, 0.0, 0.02)

    def forward(self, x):
        B, T, C = x.shape
        h = x.reshape(B * T, C)                                    # [N, H]
        probs = F.softmax(self.router(h), dim=-1)                  # [N, E]
        top_vals, top_idx = torch.topk(probs, self.top_k, dim=-1)  # [N, k]
        top_vals = top_vals / top_vals.sum(dim=-1, keepdim=True)
        gates = torch.zeros_like(probs).scatter(1, top_idx, top_vals)  # [N, E]
        a = torch.matmul(h, self.w1)                               # [E, N, F]
        b = torch.matmul(h, self.w3)                               # [E, N, F]
        y = torch.matmul(F.silu(a) * b, self.w2)                   # [E, N, H]
        out = (gates.t().unsqueeze(-1) * y).sum(dim=0)             # [N, H]
        return out.reshape(B, T, C)


class MoEAttention(nn.Module):
    """Causal attention with separate q/k/v projections; the mask is built in forward (a
    constant once shapes are static)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim ** -0.5)
        scores = scores.masked_fill(future, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, C))


class MoEBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, n_experts, top_k, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, eps=eps)
        self.attn = MoEAttention(d_model, n_heads)
        self.ln_2 = nn.LayerNorm(d_model, eps=eps)
        self.moe = MoEFeedForward(d_model, d_ff, n_experts, top_k)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.moe(self.ln_2(x))


class MoE(nn.Module):
    def __init__(self, vocab_size=32000, max_seq=1024, d_model=512, n_layers=8, n_heads=8,
                 d_ff=2048, n_experts=8, top_k=2, eps=1e-5):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos_embed = nn.Embedding(max_seq, d_model)
        self.blocks = nn.ModuleList(MoEBlock(d_model, n_heads, d_ff, n_experts, top_k, eps)
                                    for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model, eps=eps)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        x = self.embed(input_ids) + self.pos_embed(torch.arange(T, device=input_ids.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def moe(**kw) -> nn.Module:
    """MoE decoder: pre-LN attention + top-2 SwiGLU mixture-of-experts FFN in every block."""
    model = MoE(**kw)
    _init_transformer_(model)
    return model


# --------------------------------------------------------------------------------------------
# torchvision models
# --------------------------------------------------------------------------------------------

def resnet50(layers=(3, 4, 6, 3), width_per_group=64, num_classes=1000) -> nn.Module:
    """torchvision ResNet with Bottleneck blocks (defaults: ResNet-50, 25.6M parameters)."""
    from torchvision.models.resnet import Bottleneck, ResNet
    model = ResNet(Bottleneck, list(layers), num_classes=num_classes,
                   width_per_group=width_per_group)
    _perturb_torchvision_(model)
    return model


def vit_b_16(image_size=224, patch_size=16, num_layers=12, num_heads=12, hidden_dim=768,
             mlp_dim=3072, num_classes=1000) -> nn.Module:
    """torchvision VisionTransformer (defaults: ViT-B/16, 86.6M parameters)."""
    from torchvision.models.vision_transformer import VisionTransformer
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads,
                              hidden_dim=hidden_dim, mlp_dim=mlp_dim, num_classes=num_classes)
    _perturb_torchvision_(model)
    return model


# --------------------------------------------------------------------------------------------
# The zoo: configs and example inputs
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class ModelSpec:
    builder: Callable[..., nn.Module]
    configs: Dict[str, dict]          # config name -> builder kwargs
    shapes: Dict[str, dict]           # config name -> {"batch": B, "seq"/"image": ...}
    kind: str                         # "lm", "encoder" or "image"
    output_names: List[str]


_SMALL_LM = dict(d_model=64, n_layers=2, n_heads=4)

ZOO: Dict[str, ModelSpec] = {
    "gpt2": ModelSpec(
        gpt2,
        {"tiny": dict(vocab_size=256, n_positions=32, **_SMALL_LM),
         "small": dict(vocab_size=512, n_positions=64, **_SMALL_LM),
         "standard": dict()},
        {"tiny": dict(batch=1, seq=32), "small": dict(batch=2, seq=16),
         "standard": dict(batch=1, seq=1024)},
        "lm", ["logits"]),
    "bert": ModelSpec(
        bert,
        {"small": dict(vocab_size=512, max_positions=64, d_ff=256, **_SMALL_LM),
         "standard": dict()},
        {"small": dict(batch=2, seq=16), "standard": dict(batch=1, seq=512)},
        "encoder", ["hidden_states"]),
    "llama": ModelSpec(
        llama,
        {"small": dict(vocab_size=512, n_kv_heads=2, d_ff=176, max_seq=64, **_SMALL_LM),
         "standard": dict(max_seq=1024)},
        {"small": dict(batch=2, seq=16), "standard": dict(batch=1, seq=1024)},
        "lm", ["logits"]),
    "moe": ModelSpec(
        moe,
        {"small": dict(vocab_size=512, max_seq=64, d_ff=128, n_experts=4, top_k=2,
                       **_SMALL_LM),
         "standard": dict()},
        {"small": dict(batch=2, seq=16), "standard": dict(batch=1, seq=1024)},
        "lm", ["logits"]),
    "resnet50": ModelSpec(
        resnet50,
        {"small": dict(layers=(1, 1, 1, 1), width_per_group=16, num_classes=10),
         "standard": dict()},
        {"small": dict(batch=2, image=64), "standard": dict(batch=1, image=224)},
        "image", ["logits"]),
    "vit_b_16": ModelSpec(
        vit_b_16,
        {"small": dict(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                       mlp_dim=128, num_classes=10),
         "standard": dict()},
        {"small": dict(batch=2, image=32), "standard": dict(batch=1, image=224)},
        "image", ["logits"]),
}


def build(name: str, config: str = "small", seed: int = 0, **overrides) -> nn.Module:
    """Build zoo model `name` with config `config` (random weights from `seed`), in eval mode."""
    spec = ZOO[name]
    if config not in spec.configs:
        raise KeyError(f"model {name!r} has no config {config!r} "
                       f"(has: {', '.join(spec.configs)})")
    torch.manual_seed(seed)
    model = spec.builder(**{**spec.configs[config], **overrides})
    return model.eval()


def example_inputs(name: str, config: str = "small", batch: Optional[int] = None,
                   seq: Optional[int] = None, seed: int = 1) -> Dict[str, torch.Tensor]:
    """Deterministic example inputs for zoo model `name`, keyed by forward() argument name."""
    spec = ZOO[name]
    shape = dict(spec.shapes[config])
    if batch is not None:
        shape["batch"] = batch
    if seq is not None:
        shape["seq"] = seq
    kw = spec.configs[config]
    gen = torch.Generator().manual_seed(seed)
    B = shape["batch"]
    if spec.kind == "image":
        s = shape["image"]
        return {"x": torch.randn(B, 3, s, s, generator=gen)}  # torchvision names it x
    T = shape["seq"]
    vocab = kw["vocab_size"] if "vocab_size" in kw else _default_kw(spec.builder, "vocab_size")
    ids = torch.randint(0, vocab, (B, T), generator=gen)
    if spec.kind == "lm":
        return {"input_ids": ids}
    types = torch.randint(0, 2, (B, T), generator=gen)
    mask = torch.ones(B, T, dtype=torch.long)
    for b in range(1, B):  # later samples get some padding at the end
        mask[b, T - (b * T) // (2 * B):] = 0
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def _default_kw(builder: Callable, key: str):
    """The default of `key` in the model class that `builder` constructs."""
    import inspect
    cls = {gpt2: GPT2, bert: Bert, llama: Llama, moe: MoE}[builder]
    return inspect.signature(cls.__init__).parameters[key].default
