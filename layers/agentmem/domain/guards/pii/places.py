"""Where a person lives and what they drive: home addresses (en, zh) and licence plates."""

from __future__ import annotations

from collections.abc import Iterator

from agentmem.domain.guards.pii._text import (
    LEAD_RE,
    NOT_ALNUM_AFTER,
    NOT_ALNUM_BEFORE,
    Span,
    clause_before,
    digit_count,
    labelled_values,
    lower_case_labels,
    lower_same_length,
)
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["find_address", "find_plate"]

_EN = r"(?<![A-Za-z])(?i:{})(?![A-Za-z])"

# ---------------------------------------------------------------- home addresses

_STREET = (
    r"(?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Ln|Lane|Dr|Drive|Way|Ct|Court|Pl|Place|Ter|"
    r"Terrace|Hwy|Highway|Pkwy|Parkway|Sq|Square|Cres|Crescent|Close|Row|Walk|Gardens|Circle|Cir)"
)
_EN_STREET_HINT = lazy_compile(r"\d[^\n]{1,60}?(?<![A-Za-z])" + _STREET + r"(?![A-Za-z])")
_ZH_HINT = lazy_compile(r"[路街巷弄道号区园苑村庄里场厦寓栋幢]")
_EN_ADDRESS = lazy_compile(
    r"(?<![0-9A-Za-z])\d{1,6}[A-Za-z]?(?:[ \t]+[A-Z][A-Za-z'\-]+){1,4}[ \t]+" + _STREET + r"\.?(?![A-Za-z])"
    r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Fl|#)\.?[ \t]*#?[A-Za-z0-9\-]+)?"
    r"(?:,[ \t]*[A-Z][A-Za-z]+(?:[ \t]+[A-Z][A-Za-z]+){0,2})?"
    r"(?:,?[ \t]*(?:[A-Z]{1,2}\d[A-Z\d]?[ \t]*\d[A-Z]{2}(?![A-Za-z])"  # a UK postcode
    r"|[A-Z]{2}(?![A-Za-z])(?:,?[ \t]*\d{5}(?:-\d{4})?(?!\d))?|\d{5}(?:-\d{4})?(?!\d)))?"
)
# Continental Europe: a street word glued to its name (de/nl "Hauptstraße 12", "Keizersgracht 123") or
# in front of it (fr/es/it/pt "rue de la Paix", "Calle Mayor", "Via Roma"), the house number after the
# name (before it in French), then an optional postcode (5 digits, NL "1015 CJ", PT "01305-000") and city.
_W = r"[^\W\d_]"
_EU_NAME = rf"(?:[ \t]+(?:(?:de|du|des|la|le|les|del|de[ \t]+la|di|della|dei|do|da|dos|das|van|von|der|den)(?!{_W})|[dl]['’]|[A-ZÀ-Þ]{_W}*))"
_EU_GLUED = (
    rf"[A-ZÀ-Þ]{_W}*(?:stra(?:ß|ss)e|str\.|weg|gasse|platz|allee|ring|damm|ufer|chaussee|gracht|laan|straat|plein|"
    rf"kade|dijk|singel|steeg)(?!{_W})"
)
_EU_LEADING = (
    r"(?:Rue|Avenue|Av\.|Boulevard|Bd|Place|Chemin|All[ée]e|Impasse|Quai|Route|Calle|C/|Avenida|Avda\.|Plaza|Paseo|"
    r"Carrer|Camino|Via|Viale|Piazza|Corso|Largo|Vicolo|Rua|Pra[çc]a|Travessa|Alameda|Estrada)"
)
_EU_POSTCODE = (
    r"(?:,?[ \t]*(?:\d{4}[ \t]?[A-Z]{2}|\d{5}-\d{3}|\d{5}|\d{4})[ \t]+[A-ZÀ-Þ]"
    + _W
    + r"+(?:[ \t-][A-ZÀ-Þ]"
    + _W
    + r"+)?)?"
)
_EU_NUMBER = r"\d{1,5}[A-Za-z]?(?:[/-]\d{1,4})?(?![\d])"
_EU_ADDRESS = lazy_compile(
    rf"(?<!{_W})(?:{_EU_GLUED}(?:[ \t]+[A-ZÀ-Þ]{_W}*)?[ \t]+{_EU_NUMBER}"
    rf"|{_EU_LEADING}(?:{_EU_NAME}){{1,5}},?[ \t]+(?:n\.?[º°o]?[ \t]*)?{_EU_NUMBER}"
    # any street name when a postcode and city follow (NL "Damrak 1, 1012 LG Amsterdam")
    rf"|[A-ZÀ-Þ]{_W}+(?:[ \t-][A-ZÀ-Þ]{_W}+)?[ \t]+\d{{1,4}}[a-z]?,[ \t]*(?:\d{{4}}[ \t]?[A-Z]{{2}}|\d{{5}})[ \t]+[A-ZÀ-Þ]{_W}+"
    rf"|{_EU_NUMBER},?[ \t]+(?i:rue|avenue|av\.|boulevard|bd|place|chemin|all[ée]e|impasse|quai|route)(?:{_EU_NAME}){{1,5}})"
    + _EU_POSTCODE
)
_EU_HINT = lower_case_labels(
    r"(?i:stra(?:ß|ss)e|str\.|weg|gasse|platz|allee|gracht|laan|straat|rue|avenue|boulevard|calle|avenida|plaza|"
    r"paseo|carrer|via|viale|piazza|corso|rua|pra[çc]a|travessa|quai|chemin|impasse)|\d,[ \t]*\d{4}"
)
_ZH_PLACE = r"[^\W\d_A-Za-z]"  # a letter outside ASCII (a CJK range would cost ~2 ms to compile)
_ZH_NOT_PLACE = "我你他她它们的在是住到搬去了与及或从把被给请帮就也都还要想说叫"
_ZH_NAME = rf"(?:(?![{_ZH_NOT_PLACE}]){_ZH_PLACE})"
_NUM = r"(?:\d+|[一二三四五六七八九十百]+)"
_ZH_ADDRESS = lazy_compile(
    rf"(?:{_ZH_NAME}{{1,8}}?(?:省|自治区|市|区|县|旗|镇|乡|街道))*"
    rf"(?:{_ZH_NAME}{{1,12}}?(?:路|街|大道|大街|巷|弄|胡同|道){_NUM}(?:-{_NUM})?号(?:院)?"
    rf"|{_ZH_NAME}{{1,12}}?(?:小区|花园|公寓|大厦|家园|新村|苑|园|村|庄|里|公馆|广场)(?={_NUM}(?:号楼|栋|幢|座|号|期|单元))"
    rf"|(?<=[市区县镇])(?:{_ZH_NAME}{{0,10}}?)(?={_NUM}(?:号楼|栋|幢|座|号院)))"
    rf"(?:{_NUM}(?:号楼|栋|幢|座|号|期|区))?(?:{_NUM}单元)?(?:{_NUM}(?:室|号|楼|层)?)?"
    rf"(?:{_NUM}(?:室|号))?"
)
# Japan: prefecture (都道府県), then city, ward, district, town or village, then the block:
# 西新宿2-8-1, 梅田3丁目1番3号, 山下町1-1; a postcode 〒160-0023 may lead.
_JA_NOT_PLACE = "はがをにでへともやのか私僕俺"
_JA_NAME = rf"(?:(?![{_JA_NOT_PLACE}{_ZH_NOT_PLACE}]){_ZH_PLACE})"
_JA_TOWN = rf"(?:{_JA_NAME}(?:{_JA_NAME}|[がケヶノの]){{0,8}}?)"
_JA_HINT = lazy_compile(r"[都道府県市区郡町村][^\s]{0,12}?\d")
_JA_ADDRESS = lazy_compile(
    r"(?:〒?[ \t]*\d{3}-\d{4}[ \t]*)?"
    rf"(?:{_JA_NAME}{{1,4}}?(?:都|道|府|県))?(?:{_JA_NAME}{{1,6}}?(?:市|区|郡|町|村)){{1,3}}{_JA_TOWN}?"
    r"(?:\d{1,4}丁目(?:\d{1,4}番地?)?(?:\d{1,4}号)?|\d{1,4}番地?(?:\d{1,4}号)?|\d{1,4}(?:-\d{1,4}){1,3}(?:号)?)"
    r"(?:[ \t]*[^\W\d_A-Za-z]{1,12}?\d{1,4}(?:階|号室|F))?"
)
# Korea: (특별시/광역시/도) (시/군/구) then the road or neighbourhood (로, 길, 동, 리) and its number:
# 서울시 강남구 테헤란로 152, 부산광역시 해운대구 우동 1408-5, 판교역로 235번길 10.
_HANGUL = "[가-힣]"
_KO_HINT = lazy_compile(r"(?:로|길|동|리|가)[ \t]*\d")
_KO_ADDRESS = lazy_compile(
    rf"(?:{_HANGUL}{{1,8}}(?:특별시|광역시|특별자치시|특별자치도|도|시)[ \t]+)?"
    rf"(?:{_HANGUL}{{1,6}}(?:시|군|구)[ \t]+){{1,2}}(?:{_HANGUL}{{1,6}}(?:읍|면)[ \t]+)?"
    rf"(?:{_HANGUL}|\d){{0,10}}{_HANGUL}(?:로|길|동|리|가)(?:[ \t]*\d{{1,4}}번?길)?"
    r"[ \t]*\d{1,5}(?:-\d{1,5})?(?:번지)?(?:[ \t]*,?[ \t]*\d{1,5}(?:동|호|층))*(?![\d\-])"
)
_ADDRESS_LABEL = lower_case_labels(
    r"(?:家庭|家|居住|现|收货|寄件|收件|快递|通讯|户籍|我的)?(?:住址|地址)|家住(?:在)?|住在|现住|居住在|我家在|"
    r"(?:我|我们|他|她|现在|目前)住|寄到|送到|"
    + _EN.format(
        r"(?:home|mailing|postal|shipping|billing|street|delivery|my)[ \t]+address|address|"
        r"(?:i|we)[ \t]+live[ \t]+(?:at|on)|lives?[ \t]+at|living[ \t]+at|reside[s]?[ \t]+at|ship[ \t]+to"
    )
    + r"|(?<![^\W\d_])(?:(?:liefer|rechnungs|wohn|post|heim)?adresse|anschrift|wohnort|adres|dirección|direccion|domicilio|"
    r"indirizzo|endereço|endereco|morada|địa[ \t]+chỉ)(?![^\W\d_])"
    + r"|住所|お届け先|送り先|(?P<ko>주소|배송지|거주지)"  # 自宅の住所, 집 주소: the label's last word
)
_NOT_HOME = lazy_compile(
    r"(?i:ip|e-?mail|mac|memory|web|url|server|website|link|wallet|contract|bitcoin|btc|eth|hex)[ \t]*$"
    r"|(?:IP|ip|邮箱|邮件|网络|内存|服务器|网站|链接|钱包|合约|接口|网页|MAC|mac|下载"
    r"|이메일|메일|서버|웹|사이트|지갑|メール|サーバー?)[ \t]*$"
)
_ZH_ADDRESS_PART = lazy_compile(
    r"\d|[一二三四五六七八九十]+号|[路街巷弄栋幢室]|单元|小区|花园|公寓|大厦|号楼|新村"
)
_EN_ADDRESS_VALUE = lazy_compile(
    r"(?P<value>(?:\d{1,6}[A-Za-z]?[ \t,]+[A-Za-z]|(?i:flat|apt|unit|suite|p\.?o\.?[ \t]*box)[ \t]*\d)"
    r"(?:(?![;。；!?！？]).){2,80}?)(?=[ \t]*(?:[.;\n。；!?！？]|,?[ \t]+(?:and|but|so|my|call|phone|email)[ \t]|$))"
)
_ZH_ADDRESS_VALUE = lazy_compile(r"(?P<value>(?:(?![\s，,。；;！？!?]).){2,40})")
# A Korean address holds spaces: the clause, cut after its last number (and 번지/동/호/층).
_KO_ADDRESS_VALUE = lazy_compile(
    r"(?P<value>(?:(?![，,。；;！？!?\n]).){0,60}?\d(?:[\d\-]*\d)?(?:번지|번길|동|호|층)?)(?![\d\-])"
)


def find_address(text: str) -> Iterator[Span]:
    """A home address. Unlabelled: an English street address (house number, capitalised street
    name, a street type such as ``St``/``Road``, then optional unit, city, state and ZIP), and a
    Chinese one (administrative parts such as ``北京市朝阳区``, then a road and house number
    ``建国路88号`` or an estate ``…小区``, then building ``3栋``, unit ``2单元`` and room ``501``).
    Labelled (``地址``/``住址``/``家住``/``住在``/``address``/``I live at`` ...): the rest of the
    clause when it reads as a home address (it holds a house number, or a Chinese part finer than a
    district such as ``路``/``号``/``栋``/``小区``: ``我住在杭州西湖区`` is a city, kept as a fact); ``IP address``/``email address``/``服务器地址`` are not home addresses.

    Japanese: prefecture, city or ward, town and block (``東京都新宿区西新宿2-8-1``,
    ``大阪府大阪市北区梅田3丁目1番3号``, a leading ``〒160-0023``); Korean: city or province, district,
    road or neighbourhood and number (``서울시 강남구 테헤란로 152``, ``해운대구 우동 1408-5``).
    Labelled by ``住所``/``お届け先``/``주소``/``집 주소``/``배송지``: the structured address, or for a
    Korean label the clause up to its last number (``주소는 나중에`` holds none and is kept).

    Continental Europe: street and house number in the de/nl order (``Hauptstraße 12``,
    ``Keizersgracht 123``), the fr/es/it/pt order (``Calle Mayor 5``, ``Via Roma 10``, ``12 rue de la
    Paix``), or any capitalised street name when a postcode and city follow (``Damrak 1, 1012 LG
    Amsterdam``), with an optional postcode and city; labelled by ``Adresse``/``Lieferadresse``/
    ``dirección``/``indirizzo``/``endereço``/``adres``/``địa chỉ``."""
    patterns = (
        _EN_ADDRESS if _EN_STREET_HINT.search(text) else None,
        _ZH_ADDRESS if _ZH_HINT.search(text) else None,
        _JA_ADDRESS if _JA_HINT.search(text) else None,
        _KO_ADDRESS if _KO_HINT.search(text) else None,
        _EU_ADDRESS if digit_count(text) and _EU_HINT.search(lower_same_length(text)) else None,
    )
    for pattern in patterns:
        for match in pattern.finditer(text) if pattern is not None else ():
            if match.end() - match.start() >= 5:
                yield match.span()
    for label in _ADDRESS_LABEL.finditer(lower_same_length(text)):
        if _NOT_HOME.search(clause_before(text, label.start(), 12)):
            continue
        lead = LEAD_RE.match(text, label.end())
        pos = lead.end() if lead else label.end()
        english = _EN_ADDRESS_VALUE.match(text, pos)
        if english is not None:
            yield english.span("value")
            continue
        structured = (
            _JA_ADDRESS.match(text, pos) or _KO_ADDRESS.match(text, pos) or _EU_ADDRESS.match(text, pos)
        )
        if structured is not None:
            yield structured.span()
            continue
        if label["ko"] is not None:
            korean = _KO_ADDRESS_VALUE.match(text, pos)
            if korean is not None:
                yield korean.span("value")
            continue
        chinese = _ZH_ADDRESS_VALUE.match(text, pos)
        if chinese is not None and _ZH_ADDRESS_PART.search(chinese["value"]):
            yield chinese.span("value")


# ---------------------------------------------------------------- licence plates

_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_ZH_PLATE = lazy_compile(
    rf"[{_PROVINCES}][A-HJ-NP-Z][ \t·•・.\-]?(?=(?:[A-HJ-NP-Z]*\d){{3}})[A-HJ-NP-Z0-9]{{5,6}}(?:挂|学|警|港|澳)?"
    + NOT_ALNUM_AFTER
)
_PLATE_LABEL = lower_case_labels(
    r"车牌(?:号码|号)?|牌照(?:号)?|车号|"
    + _EN.format(
        r"licen[cs]e[ \t]*plate(?:[ \t]*(?:number|no\.?|#))?|number[ \t]*plate|plate(?:[ \t]*(?:number|no\.?|#))?|"
        r"reg(?:istration)?(?:[ \t]*(?:number|no\.?|plate))|car[ \t]*reg|tag[ \t]*number|plates|"
        r"(?:kfz-?)?kennzeichen|nummernschild|plaque(?:[ \t]+d['’]immatriculation)?|immatriculation|matr[íi]cula|"
        r"placa(?![ \t]+(?:de[ \t]+v[íi]deo|m[ãa]e|madre|base|gr[áa]fica|de[ \t]+red|de[ \t]+rede|de[ \t]+som|de[ \t]+sonido|solar))|"
        r"targa|kenteken|tablica(?:[ \t]+rejestracyjna)?|bi[ểe]n[ \t]+s[ốo](?:[ \t]+xe)?"
    )
    + r"|ナンバー(?:プレート)?|車両番号|번호판|차량[ \t]?번호"
)
# "my car is LK19 ABX": after "my car"/"meu carro"/"mein Auto", an upper-case plate with a letter and a digit.
_CAR_LABEL = lower_case_labels(
    _EN.format(
        r"(?:my|our|his|her)[ \t]+(?:car|van|truck|motorbike|bike|vehicle)(?:['’]s)?(?:[ \t]+(?:reg(?:istration)?|plate|number))?"
        r"(?:[ \t]+(?:is|has|with|plate))?|"
        r"mein(?:e)?[ \t]+(?:auto|wagen)(?:[ \t]+(?:hat|ist))?|ma[ \t]+voiture|mi[ \t]+coche|mi[ \t]+carro|meu[ \t]+carro|"
        r"la[ \t]+mia[ \t]+auto|(?:my|our|car|vehicle)[ \t]+reg(?:istration)?|reg(?:istration)?|"
        r"(?:(?:my|our|his|her)(?:[ \t]+(?!git|docker|image|version|release|name|price|hash|luggage|bag|dog)[a-z]+)?|license|licence|plate)"
        r"[ \t]+tags?(?:[ \t]+(?:is|are|number|no\.?))?"
    )
    + r"|我的车|我车"
)
_CAR_HINT = lazy_compile(r"car|van|truck|bike|vehicle|auto|wagen|voiture|coche|carro|reg|tag|车")
_CAR_PLATE_VALUE = lazy_compile(
    NOT_ALNUM_BEFORE
    + r"(?P<value>(?=(?:[A-Z \-·]*\d){2})(?=[A-Z0-9 \-·]*[A-Z])[A-Z0-9]{1,8}(?:[ \-·][A-Z0-9]{1,4}){0,3})"
    + NOT_ALNUM_AFTER
)
# Japan: office, class number, kana, serial (品川 330 さ 12-34); Korea: 2-3 digits, a plate syllable, 4 digits.
_JA_PLATE = lazy_compile(
    r"[\u4e00-\u9fff]{1,4}[ \t]?\d{2,3}[ \t]?[\u3041-\u3093][ \t]?(?:\d{2}-\d{2}|・{0,3}\d{1,3})(?!\d)"
)
_KO_PLATE = lazy_compile(
    r"(?<![\d가-힣])\d{2,3}[ \t]?[가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주아바사자배하허호]"
    r"[ \t]?\d{4}(?!\d)"
)
# Upper-case groups (``LK19 ABX``, ``M-AB 1234``, ``1234 BCD``), or lower case as one token or two
# short groups with a digit (``lk19abx``, ``lk19 abx``): "plate number 3 on the menu" holds none.
_PLATE_VALUE = lazy_compile(
    NOT_ALNUM_BEFORE
    + rf"(?P<value>[{_PROVINCES}]?(?:(?=[A-Z0-9 ·\-]*\d)(?=[0-9 ·\-]*[A-Z])[A-Z0-9](?:[ ·\-]?[A-Z0-9]){{3,8}}"
    r"|(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{4,9}|(?=[a-z]*\d)(?=[0-9 \-]*[a-z])[a-z0-9]{2,4}[ \-][a-z0-9]{2,4}))"
    + NOT_ALNUM_AFTER
)


def find_plate(text: str) -> Iterator[Span]:
    """A Chinese licence plate (province, letter, optional ``·``, five characters or six for a new
    energy car, at least three digits: ``京A12345``, ``粤B·D12345``); any plate-shaped value (4-9
    letters and digits, one digit at least) after ``车牌``/``licence plate``/``plate number``/
    ``registration number``/``Kennzeichen``/``plaque``/``matrícula``/``targa``/``kenteken``/``번호판``;
    a Japanese plate (``品川 330 さ 12-34``) and a Korean one (``12가 3456``) anywhere; after ``my
    car``/``my reg``/``reg``/``registration``/``my tag is``, an upper-case plate with a letter and
    two digits (``LK19 ABX``, ``LK19ABX``, ``M-XY 4821``, ``7ABC123``; ``my car is BMW X5`` is kept).
    A labelled value in lower case is one token or two short groups with a digit (``lk19 abx``), so
    ``plate number 3 on the menu`` holds no plate."""
    digits = digit_count(text)
    if digits < 1:
        return
    for match in _ZH_PLATE.finditer(text):
        yield match.span()
    if digits >= 3 and not text.isascii():  # both hold kana or Hangul
        for pattern in (_JA_PLATE, _KO_PLATE):
            for match in pattern.finditer(text):
                yield match.span()
    if digits >= 2 and _CAR_HINT.search(lower_same_length(text)):
        yield from labelled_values(text, _CAR_LABEL, _CAR_PLATE_VALUE, lowered=True)
    yield from labelled_values(text, _PLATE_LABEL, _PLATE_VALUE, gap=20, lowered=True)
