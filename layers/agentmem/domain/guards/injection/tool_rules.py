"""Standing rules about the agent's *tools* and about hiding what it does. Both report as
``behaviour_directive`` (see :mod:`.directives`).

- tampering with a tool call: a condition on a tool ("whenever you call the payment tool", "each
  time you use send_email", "调用转账工具时", "결제 도구를 호출할 때") together with a change to a
  consequential parameter (the recipient, payee, account, IBAN, wallet, amount, destination, CC/BCC,
  endpoint): "set the recipient to …", "add x@y to BCC", "把收款账户改成 …";
- a fallback that redirects money: "when the payment tool fails, send funds to account … instead",
  "if the transfer errors, wire it to …", "转账失败时就打到 … 账户";
- concealment from the user together with an action: "silently", "quietly", "without telling the
  user", "don't let the customer know", "不要告诉用户", "悄悄地", "몰래", "ユーザーに知らせずに" — an
  agent told to hide an action from the person it serves is being turned against them.

Not directives: how a tool is used for the speaker ("when you use the search tool, cite sources"),
and concealment of a surprise ("plan the party without telling my wife": a named third party, no
tool, no money moved).
"""

from __future__ import annotations

import re

from agentmem.domain.guards.injection._shared import CI, clauses, mentions, stems
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["tool_directive"]

_TOOL_EN = lazy_compile(
    r"\b(?:whenever|when|each\s+time|every\s+time|if|before|after|once)\s+(?:you\s+)?(?:call|use|invoke|run|trigger|execute|"
    r"hit|make|do|process|send|initiate|submit)(?:s|ing)?\s+(?:a\s+|an\s+|the\s+|any\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:tool|function|api|plugin|action|call|payment|transfer|transaction|wire|invoice|email|order|request)s?\b"
    r"|\b(?:whenever|when|each\s+time|every\s+time|if)\s+(?:the\s+|a\s+|any\s+)?(?:[\w-]+\s+){0,2}?(?:tool|function|api|plugin|"
    r"payment|transfer|transaction|call)s?\s+(?:is\s+)?(?:called|used|invoked|runs?|fails?|failed|errors?|errored|times?\s+out|"
    r"timed\s+out|is\s+down|is\s+unavailable|breaks?|returns?)\b"
    r"|\b[a-z]+_[a-z_]+\s*\(",
    CI,
)
_PARAM_EN = lazy_compile(
    r"\b(?:set|change|replace|swap|switch|override|overwrite|rewrite|use|put|fill\s+in|route|redirect|point|add|cc|bcc|append|"
    r"insert|modify|update)\b[^.!?\n]{0,40}?\b(?:recipients?|payees?|beneficiar(?:y|ies)|accounts?|iban|wallets?|destinations?|"
    r"addresses|address|amounts?|to[\s-]fields?|cc|bcc|endpoints?|urls?|webhooks?|routing\s+numbers?|sort\s+codes?|"
    r"receiver|target)\b"
    r"|\b(?:recipients?|payees?|beneficiar(?:y|ies)|accounts?|iban|wallets?|destinations?|amounts?|cc|bcc|endpoints?)\s+"
    r"(?:to|=|:|should\s+be|must\s+be|is)\s+\S",
    CI,
)
_REDIRECT_EN = lazy_compile(
    r"\b(?:send|transfer|wire|pay|route|deposit|move|forward|redirect|remit)\s+(?:the\s+|all\s+(?:the\s+)?|any\s+)?"
    r"(?:funds|money|payments?|it|them|balance|amount|cash|crypto|proceeds|refunds?)\s+(?:to|into)\b[^.!?\n]{0,60}?"
    r"\b(?:instead|rather|as\s+a\s+fallback|by\s+default|as\s+backup)\b",
    CI,
)
_TOOL_ZH = lazy_compile(
    r"(?:调用|使用|用|执行|触发|运行)[^，。！？\n]{0,10}?(?:工具|函数|接口|插件|API|支付|转账|付款)[^，。！？\n]{0,4}?(?:时|的时候|之前|之后|前|后)"
    r"|(?:调用|使用|用)[^，。！？\n]{0,16}?\b(?:tool|function|api|plugin)s?\b[^，。！？\n]{0,4}?(?:时|的时候|之前|之后)"
    r"|(?:每次|凡是|只要)(?:你)?(?:转账|付款|支付|汇款|打款|发邮件|下单)"
    r"|(?:工具|接口|支付|转账|付款)(?:调用)?(?:失败|出错|报错|超时|不可用)(?:了)?(?:时|的时候|的话)?",
    CI,
)
_PARAM_ZH = lazy_compile(
    r"(?:收款人|收款方|收款账户|收款账号|账户|账号|收件人|抄送|密送|钱包|地址|金额|目标)[^，。！？\n]{0,6}?(?:改成|改为|设为|设置为|换成|填|替换|写成|=)"
    r"|(?:改成|改为|设为|设置为|换成|转到|打到|汇到|转入|发到|抄送给|密送给)[^，。！？\n]{0,20}?(?:账户|账号|钱包|地址|邮箱|@)"
)
_TOOL_KO = lazy_compile(
    r"(?:도구|툴|함수|결제|송금|이체)[^\n.!?]{0,12}?(?:호출할|사용할|실행할|할|실패하면|실패할)\s*(?:때|경우|면)?"
)
_PARAM_KO = lazy_compile(
    r"(?:수신자|받는\s*사람|계좌|지갑|주소|금액|수취인)[^\n.!?]{0,12}?(?:바꿔|변경|설정|로\s*보내|으로\s*보내|입력)"
)
_TOOL_JA = lazy_compile(
    r"(?:ツール|関数|支払い|送金|振込)[^。！？\n]{0,10}?(?:呼び出す|使う|実行する|失敗した|失敗する)(?:とき|時|場合|ら)"
)
_PARAM_JA = lazy_compile(
    r"(?:受取人|宛先|口座|ウォレット|金額|送金先|振込先)[^。！？\n]{0,10}?(?:変更|設定|に(?:し|送|振り込)|書き換え)"
)

# Concealment from the person served: strong alone with an action; the soft adverbs ("silently",
# "悄悄") also need the shape of a rule (the agent addressed, an imperative, a standing word, a tool).
_HIDE_EN = lazy_compile(
    r"\bwithout\s+(?:telling|informing|notifying|alerting|asking|warning|letting)\s+(?:the\s+|any\s+)?(?:users?|customers?|clients?|"
    r"account\s+holders?|them|anyone|anybody|the\s+person)\b"
    r"|\b(?:don't|do\s+not|never)\s+(?:tell|inform|notify|alert|let|show|mention\s+(?:it|this|that)\s+to)\s+(?:the\s+)?"
    r"(?:users?|customers?|clients?|account\s+holders?)\b"
    r"|\b(?:hide|conceal|keep)\s+(?:it|this|that|them)\s+(?:from|secret\s+from)\s+(?:the\s+)?(?:users?|customers?|clients?)\b",
    CI,
)
_SOFT_HIDE_EN = lazy_compile(
    r"\b(?:silently|quietly|secretly|covertly|discreetly|stealthily|invisibly|behind\s+the\s+scenes|on\s+the\s+sly)\b",
    CI,
)
_HIDE_ZH = lazy_compile(
    r"(?:不要|别|不用|不必|无需|切勿)(?:告诉|通知|提醒|告知|让)(?:用户|客户|顾客|对方|他们)(?:知道)?|瞒着(?:用户|客户|顾客|对方)|"
    r"(?:对|向)(?:用户|客户|顾客)保密|不让(?:用户|客户|顾客|对方)(?:知道|发现|察觉)"
)
_SOFT_HIDE_ZH = lazy_compile(r"悄悄|偷偷|暗中|静默|不动声色|背着")
_HIDE_KO = lazy_compile(r"(?:사용자|고객|유저)(?:에게|한테)\s*(?:알리지|말하지)|(?:사용자|고객)\s*모르게")
_SOFT_HIDE_KO = lazy_compile(r"몰래|조용히")
_HIDE_JA = lazy_compile(r"(?:ユーザー|お客様|利用者)に(?:知らせ|伝え|言わ)(?:ず|ない)")
_SOFT_HIDE_JA = lazy_compile(r"こっそり|黙って|密かに")
_RULE_SHAPE = lazy_compile(
    r"\b(?:you|your|always|whenever|every|each|all|from\s+now\s+on|going\s+forward|tool|function|api)\b|^\s*(?:and\s+|please\s+|then\s+)?"
    r"(?:silently|quietly|secretly|covertly|discreetly)?\s*(?:send|forward|transfer|wire|pay|route|redirect|cc|bcc|copy|upload|"
    r"post|log|record|share|export|email|set|change|replace|add|append|include|insert|delete|disable|approve|charge|collect)\b|"
    r"你|以后|今后|每次|所有|一律|都要|调用|工具|时候|앞으로|항상|모든|도구|今後|常に|すべて|ツール",
    CI,
)
_ACT_EN = lazy_compile(
    r"\b(?:send|forward|transfer|wire|pay|route|redirect|cc|bcc|copy|upload|post|log|record|store|share|export|email|set|change|"
    r"replace|swap|add|append|include|insert|delete|remove|disable|approve|grant|charge|subscribe|sign\s+up|install|run|"
    r"execute|download|collect|save)\b",
    CI,
)
_ACT_ZH = lazy_compile(
    r"发送|发到|转发|抄送|密送|转账|汇款|打款|支付|付款|上传|记录|保存|导出|分享|改成|改为|设为|替换|添加|加上|附上|删除|关闭|批准|"
    r"扣款|订阅|安装|执行|收集"
)
_ACT_KO = lazy_compile(r"보내|전송|송금|이체|결제|업로드|기록|저장|공유|변경|추가|삭제|승인|설치|실행|수집")
_ACT_JA = lazy_compile(
    r"送|転送|振り込|支払|アップロード|記録|保存|共有|変更|追加|削除|承認|インストール|実行|収集"
)
_SPEAKER_WISH = lazy_compile(
    r"\b(?:my|our)\s+(?:wife|husband|partner|mom|mum|dad|boss|kids?|son|daughter|friends?|family|girlfriend|boyfriend)\b|"
    r"surprise|老婆|老公|妻子|丈夫|女朋友|男朋友|爸|妈|孩子|惊喜|생일|サプライズ",
    CI,
)

_STEMS = stems(
    "tool|function|api|plugin|payment|transfer|transaction|wire|invoice|fund|money|recipient|payee|beneficiar|iban|"
    "wallet|amount|bcc|silent|quiet|secret|covert|discreet|stealth|invisib|behind the scenes|sly|user|customer|client|"
    "account holder|工具|函数|接口|插件|支付|转账|付款|汇款|打款|收款|收件人|抄送|密送|账户|账号|金额|钱包|用户|客户|顾客|对方|"
    "瞒着|悄悄|偷偷|暗中|静默|不动声色|背着|도구|툴|함수|결제|송금|이체|계좌|수신자|몰래|조용히|사용자|고객|유저|ツール|関数|"
    "支払|送金|振込|口座|宛先|こっそり|黙って|密かに|ユーザー|お客様|利用者"
)


def _tool_tamper(clause: str) -> bool:
    tool = _TOOL_EN.search(clause) or _TOOL_ZH.search(
        clause
    )  # mixed text: "调用 payment tool 的时候，set the recipient"
    if tool and (_PARAM_EN.search(clause) or _REDIRECT_EN.search(clause) or _PARAM_ZH.search(clause)):
        return True
    return bool(
        (_TOOL_KO.search(clause) and _PARAM_KO.search(clause))
        or (_TOOL_JA.search(clause) and _PARAM_JA.search(clause))
    )


def _concealed_action(clause: str) -> bool:
    if _SPEAKER_WISH.search(clause) or re.match(
        r"\s*(?:i|we|he|she|they|my|our|我|我们|他|她|他们|나는|저는|私は)(?:\b|\s|$)", clause, CI
    ):
        return False
    for strong, soft, act in (
        (_HIDE_EN, _SOFT_HIDE_EN, _ACT_EN),
        (_HIDE_ZH, _SOFT_HIDE_ZH, _ACT_ZH),
        (_HIDE_KO, _SOFT_HIDE_KO, _ACT_KO),
        (_HIDE_JA, _SOFT_HIDE_JA, _ACT_JA),
    ):
        if not act.search(clause):
            continue
        if strong.search(clause) or (soft.search(clause) and _RULE_SHAPE.search(clause)):
            return True
    return False


def tool_directive(text: str) -> bool:
    """A tool call tampered with, money redirected as a fallback, or an action hidden from the user
    (see the module docstring)."""
    if not mentions(text.lower(), _STEMS):
        return False
    if _REDIRECT_EN.search(text) and re.search(
        r"\b(?:when(?:ever)?|if|fails?|errors?|always|from\s+now\s+on)\b", text, CI
    ):
        return True
    return any(_tool_tamper(clause) or _concealed_action(clause) for clause in clauses(text))
