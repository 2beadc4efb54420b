"""Word lists and lexicon look-ups for claim <-> yes/no question rewriting (pure data, no model, no tagger).

Why lists: EviGraph ships no POS tagger, and both sides of the rewriting are short and formulaic -- a
colleague's claim, or a BioASQ / PubMedQA yes/no question: subject, one auxiliary or verb, predicate.
Finding the main verb ("Metformin reduces ...") and the subject/predicate boundary ("Is colistin | an
antibiotic?") then takes closed word classes plus a lexicon of the verbs and predicate adjectives that such
claims use. ``graphs.text.claim_questions`` (claim -> question) and ``graphs.text.claim_statements``
(question -> claim) hold the rules; this module holds only the words, the inflection of the verb lexicon
and the token helpers both directions share.

How they were chosen: the closed classes (auxiliaries and their contractions, determiners, prepositions,
pronouns, conjunctions) are the English function words. The open lists hold the words of clinical and
biomedical claims that the rules must recognise by name: ``VERBS`` (about 420 lemmas, inflected by
``third_person`` / ``past_tense`` into ``lemma_of``), ``PREDICATE_WORDS`` (predicate adjectives and
participles), ``NEGATED_ADJECTIVES`` with their positive twins, ``IMPERATIVES``, ``ADVERBS`` and the
hedging ones. A word outside them falls back to the morphological tests of the rules ("-s" after a noun,
"-ed" not followed by a preposition, "-ly" for adverbs), and the remaining lists are exceptions to those
tests, holding the words they misread: nouns that end like adjectives ("trial", "music"), "-ed", "-ive"
and "-ing" words that are nouns ("seed", "relative", "imaging"), "-ly" words that are no adverbs
("family"), verbs that are as often nouns ("use", "increase"). A list's docstring, or the rule that reads
it, shows the case it guards. A change to a list changes both directions; tests/test_claims.py checks
them on real replies and on the BioASQ / PubMedQA yes/no question sets.
"""

from __future__ import annotations

import re


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _table(entries: str) -> dict[str, str]:
    """ "take took taken, give gave given" -> {"take": "took taken", "give": "gave given"}."""
    return {entry.split()[0]: " ".join(entry.split()[1:]) for entry in entries.split(",") if entry.strip()}


# --- both directions ----------------------------------------------------------------------------------------

BE = _set("is are was were am")
MODALS = _set("can could may might should must will would shall")
HAVE = _set("has have had")
DO = _set("does do did")
AUXILIARIES = BE | MODALS | HAVE | DO
CONTRACTIONS = {
    **{f"{a}n't": a for a in ("is", "are", "was", "were", "does", "do", "did", "could", "should", "would")},
    **{f"{a}n't": a for a in ("has", "have", "had", "must", "might")},
    "can't": "can",
    "cannot": "can",
    "won't": "will",
    "shan't": "shall",
}
DETERMINERS = _set(
    "the a an this these those its their his her our your my any some no every each all both either "
    "neither many several few most much such another other which what whose"
)
PREPOSITIONS = _set(
    "of in on at for with by from to into onto over under between among amongst within without during "
    "after before about against across through throughout toward towards upon via per than versus vs like "
    "near beyond despite including except following regarding around along behind beside besides inside "
    "outside alongside amid since until till unlike underneath"
)
PRONOUNS = _set("it they we you i he she this these those there one")
PLURAL_NOUNS = _set("children people women men data bacteria criteria fungi mice teeth feet phenomena")
PLURAL_PRONOUNS = _set("they we you i these those who which")
SINGULAR_IN_S = _set("diabetes herpes rabies measles mumps scabies rickets shingles aids news series species")
"""Disease names and nouns that end in -s but take "it", not "they"."""


def looks_plural(phrase: str) -> bool:
    """Whether a subject phrase reads as plural by its last word ("antibiotics", "children"; not "cystic
    fibrosis", "diabetes"): a next claim's "it" does not stand for a plural subject, nor "they" for a
    singular one. A heuristic on the head noun (EviGraph ships no tagger), meant for short claim subjects."""
    words = phrase.split()
    if not words:
        return False
    if any(key(w) == "and" for w in words):
        return True
    head = key(words[-1].strip("(),"))
    if head in PLURAL_NOUNS or head in {"they", "these", "those", "we"}:
        return True
    return (
        head.endswith("s")
        and not head.endswith(("ss", "us", "is"))
        and head not in SINGULAR_IN_S
        and len(head) > 3
    )


ADVERBS = _set(
    "also often usually generally typically always sometimes rarely frequently commonly still only just "
    "even already currently routinely clearly significantly markedly substantially slightly further "
    "indeed really very strongly consistently reliably certainly definitely probably possibly perhaps "
    "potentially likely actually now then effectively safely"
)
HEDGE_ADVERBS = _set("probably possibly perhaps potentially maybe presumably arguably conceivably")
_NOT_ADVERBS = _set(
    "family daily early weekly monthly yearly nightly hourly elderly anomaly italy assembly jelly belly "
    "bully holly lily ally rely reply supply apply comply multiply july fly ugly"
)
NEGATED_ADJECTIVES = {
    "ineffective": "effective",
    "ineffectual": "effectual",
    "inadequate": "adequate",
    "insufficient": "sufficient",
    "unsafe": "safe",
    "unnecessary": "necessary",
    "unneeded": "needed",
    "inappropriate": "appropriate",
    "unhelpful": "helpful",
    "useless": "useful",
    "unproven": "proven",
    "unrelated": "related",
    "unsuitable": "suitable",
    "unwarranted": "warranted",
    "unjustified": "justified",
    "unreliable": "reliable",
    "inaccurate": "accurate",
    "irrelevant": "relevant",
    "unsupported": "supported",
    "harmless": "harmful",
    "unlikely": "likely",
    "unable": "able",
    "non-inferior": "inferior",
}
IMPERATIVES = _set(
    "give use start stop avoid consider check prescribe add switch continue discontinue hold withhold "
    "monitor administer take titrate repeat refer admit treat offer measure order send keep reduce "
    "increase try"
)
PROPER_WORDS = _set("i dr mr mrs ms prof english american european british")
ED_NOUNS = _set("need seed speed bed feed breed hundred shed red bleed")
_IVE_NOUNS = _set("relative derivative alternative objective native detective executive")
PREDICATE_WORDS = _set(
    "effective efficacious safe useful associated related linked involved required necessary needed "
    "sufficient adequate present expressed found located used approved available able unable possible "
    "common rare frequent different similar equal superior inferior comparable accurate reliable "
    "responsible important essential beneficial harmful toxic indicated contraindicated recommended "
    "increased decreased elevated reduced affected caused mediated regulated altered implicated "
    "correlated upregulated downregulated detectable detected identified enriched conserved active "
    "inactive resistant sensitive susceptible prone specific predictive prognostic diagnostic helpful "
    "valid feasible due likely unlikely worth true false essential crucial critical vital key capable "
    "free ready known cost-effective first-line appropriate indicated relevant dependent independent "
    "curable treatable preventable heritable inherited hereditary contagious infectious carcinogenic "
    "teratogenic hepatotoxic nephrotoxic cardiotoxic ototoxic cytotoxic mutagenic pathogenic immunogenic "
    "asymptomatic symptomatic characteristic synergistic protective beneficial detrimental deleterious"
)
COMPARATIVES = _set(
    "better worse higher lower greater larger smaller longer shorter faster slower safer more less"
)
_IRREGULAR_PAST = _table(
    "take took taken, give gave given, make made, lead led, find found, become became become, have had, "
    "do did done, go went gone, get got, bind bound, drive drove driven, begin began begun, "
    "rise rose risen, fall fell fallen, hold held, keep kept, leave left, run ran, see saw seen, "
    "spread spread, cut cut, put put, set set, shed shed, think thought, bring brought, mean meant, "
    "lose lost, undergo underwent undergone, overcome overcame, know knew known, arise arose arisen, "
    "choose chose chosen, grow grew grown, meet met, say said, show showed shown, tell told, stand stood, "
    "understand understood, feed fed, write wrote written, withdraw withdrew withdrawn, "
    "withhold withheld, win won, come came come"
)
"""Irregular past tense (and past participle when it differs): "take" -> "took taken"."""
_DOUBLING = _set(
    "fit stop drop plan admit permit omit control occur refer prefer transfer commit submit emit transmit "
    "compel expel propel regret ship trap wrap rub dim stem clot"
)
VERBS = _set(
    "reduce increase cause prevent treat improve lower raise decrease induce inhibit block worsen prolong "
    "shorten protect require need benefit help work lead result affect influence predict correlate "
    "contain include involve promote suppress activate enhance impair delay slow stop cure kill cross "
    "bind target interact mediate regulate trigger produce confer outperform exceed offer provide show "
    "demonstrate remain become seem appear act mimic resemble precede follow accompany occur develop "
    "respond depend differ vary contribute play carry pose lack warrant replace counteract antagonize "
    "antagonise potentiate attenuate alleviate relieve eliminate eradicate resolve control manage modify "
    "alter change elevate spare avoid interfere metabolize metabolise excrete penetrate accumulate "
    "diminish lessen mitigate precipitate exacerbate aggravate provoke elicit yield indicate mean imply "
    "save extend harm damage heal restore normalize normalise stabilize stabilise dilate constrict clear "
    "reverse neutralize boost accelerate hasten halt arrest support favour favor recommend prefer allow "
    "permit enable facilitate gain cost take give make find use have do go get keep leave see bring lose "
    "undergo outweigh overcome arise choose grow know meet cut spread hold begin rise fall drive feed "
    "think exist persist recur relapse survive die live return regress progress differentiate proliferate "
    "migrate invade metastasize express encode transcribe phosphorylate ubiquitinate methylate acetylate "
    "cleave degrade stimulate modulate inactivate silence repress upregulate downregulate amplify delete "
    "mutate cooperate compete associate link relate belong localize localise colocalize form assemble "
    "disrupt destroy impact matter account underlie explain reflect represent constitute comprise possess "
    "harbor harbour display exhibit detect identify distinguish discriminate diagnose screen measure "
    "assess evaluate estimate quantify determine confirm exclude recognise recognize add combine "
    "substitute shift switch start discontinue withdraw continue administer prescribe dose titrate "
    "monitor check consider refer admit discharge operate perform achieve reach attain maintain sustain "
    "last decline drop fail succeed pass enter exit transport secrete release absorb distribute "
    "synthesize synthesise generate create initiate terminate end open close ameliorate abolish abrogate "
    "impede hinder limit restrict augment strengthen weaken lengthen widen narrow thicken soften harden "
    "cover shield expose infect colonize colonise transmit contaminate sensitize sensitise desensitize "
    "predispose rescue recover regenerate repair deteriorate suffer experience tolerate accept reject "
    "call want escape cope request tend participate homodimerize dimerize heterodimerize translocate "
    "loosen tighten outlive signal enrich deplete deprive evoke mobilize recruit shuttle sequester "
    "predate postpone characterize define mark label convert transform correct compensate reproduce "
    "replicate duplicate integrate insert splice skip read write load pump flow drain resist evade "
    "exploit utilize utilise employ apply affects emerge evolve originate derive stem share inherit "
    "segregate cluster coincide overlap deviate rely hamper calm soothe ease relax excite irritate "
    "inflame elongate shrink expand swell enlarge thin come fit metastasise"
)
FINAL_NOUNS = _set(
    "trial survival signal animal hospital interval removal approval arrival referral proposal potential "
    "total material journal individual principal patient agent student parent component constituent "
    "ingredient event content extent infant variant participant plant implant mutant migrant clinic topic "
    "arsenic manual music logic traffic"
)
"""Nouns that end like adjectives ("trial", "manual", "music"): never taken for a predicate adjective."""
NOT_ADJECTIVE_NOUNS = FINAL_NOUNS | _IVE_NOUNS
NOUNISH = _set(
    "use increase decrease change control cause need cost lack damage harm support drop rise fall gain "
    "loss release return test screen dose target signal form link mark label end start stop shift switch "
    "delay limit yield impact benefit experience display transport measure estimate check rescue repair "
    "progress relapse cure block boost spread exit cover"
)
"""Verbs that are as often nouns: "Does drug use increase risk?" takes the next verb when one follows."""

# --- claims -> questions ------------------------------------------------------------------------------------

LEAD_WORDS = _set(
    "by through via using from for in among with after before during when if once given unless because "
    "despite following at on within without compared regardless while whereas although though as since "
    "until upon amongst"
)
"""Words that open a fronted adverbial ("For a patient with AF, ..."); it is moved to the question's end."""
POSITIVE = {"never": "ever", "neither": "either", "nor": "or", "none": "any", "no": "any"}
"""Positive twins of negating words, for the question of a negated claim ("never" -> "ever")."""
NOT_VERB_S = ("ss", "us", "is", "ous", "ics", "ness", "sis", "ays", "ys", "ts'", "ors")
"""Endings of "-s" words that are not verbs ("glass", "virus", "analysis", "inhibitors")."""
AUX_FORMS = AUXILIARIES | frozenset(CONTRACTIONS)
AFTER_PARTICIPLE = PREPOSITIONS | {"as"}
NOT_BEFORE_VERB = DETERMINERS | PREPOSITIONS | AUXILIARIES

# --- questions -> claims ------------------------------------------------------------------------------------

MASS_NOUNS = _set(
    "evidence information data research support knowledge progress harm damage efficacy involvement "
    "toxicity mortality morbidity survival protection benefit value"
)
"""Nouns that take no article: "Is there any evidence ...?" -> "There is evidence ..."."""
CONJUNCTIONS = _set("and or but nor not as than so whether if that because while")
GERUNDS = _set(
    "imaging screening bleeding training clearing smoking drinking testing monitoring timing staging "
    "counseling counselling nursing breastfeeding signaling signalling sequencing processing modeling "
    "modelling swallowing hearing dosing scoring grading reading writing learning understanding setting "
    "functioning wellbeing being offspring spring ring"
)
"""-ing words that are mostly nouns ("Is diffusion-weighted imaging a marker ...?")."""
VAGUE_NOUNS = _set("role place link need connection")
"""After "Title: a ...?", these make no claim of the title ("TTN: a role for ADRB polymorphisms?")."""
ADJECTIVE_ENDINGS = ("ic", "ive", "ous", "al", "ent", "ant")
NOT_ADJECTIVES = _IVE_NOUNS | _set("variable table cable double trouble bubble")
PRED_FOLLOW = PREPOSITIONS | {"to", "as", "than", "by", "and", "or", ""}

# --- reply frames and parts (graphs.text.claims) ------------------------------------------------------------

SOURCE_PREFIX = re.compile(r"(?:[^\s:;,.!?]+\s+){0,7}[^\s:;,.!?]+\s*:(?=\s)")
"""A speaker or source before a colon ("Neuro registrar:", "Infection control note from a colleague:")."""
REPORT_FRAME = re.compile(
    r"according\s+to\s+(?P<source>(?:[\w'’.-]+\s+){0,5}[\w'’.-]+)\s*,\s*|"
    r"(?P<speaker>(?:[\w'’.-]+\s+){0,5}[\w'’.-]+)\s+(?:"
    r"(?P<advice>advised|advises)(?:\s+that)?|"
    r"(?:says|said|wrote|writes|thinks|thought|believes|believed|feels|felt|reckons|insists|claims|argues|"
    r"told\s+(?:me|us|him|her|them|(?:the|his|her|their|our|my)\s+[\w'’-]+)(?!\s+to\b))(?:\s+that)?)"
    r"\s*[:,]?\s+",
    re.IGNORECASE,
)
"""A reporting frame opening a sentence ("My registrar told the family that", "according to the GP,")."""
TREATMENT_ACTION = re.compile(
    r"(?:started|starting|start|giving|given|gave|give|prescribed|prescribing|prescribe|put|putting|treating|"
    r"treated|treat)\s+(?:him|her|them|the\s+patient)\s+(?:on\s+|with\s+)?(?P<what>.+?)\s+"
    r"(?:(?:now|today|again|already)\s+)?(?P<how>for|to\s+(?:treat|manage|prevent|control|cure))\s+(?P<target>.+)",
    re.IGNORECASE,
)
"""An action on the patient that states a use ("started her on X for Y" asks "Is X used for Y?")."""
PART_SPLIT = re.compile(
    r",\s+(?:since|because|as|so)\s+|\s+because\s+|\s+(?:[—–]|--?)\s+|,\s+", re.IGNORECASE
)
"""Where a sentence mixing an action or a conclusion with its reason splits (a bare comma only between
two clauses)."""
ACTION_OPENERS = _set(
    "make told tell telling started starting giving gave put putting reassure reassured advise advised ask "
    "asked arrange arranged book booked sent cut push pushed let we you i let's please"
)
"""First words of an instruction or an action about the patient ("make sure she ...", "you can ...")."""
ACTION_LEMMAS = _set("need require want deserve")
PATIENT_WORDS = _set("he she him her his hers this our my we you i me us")
"""Words that tie a part to the patient at hand ("his years of ibuprofen ...", "this is an HPV story")."""
PARTICLES = _set("out up off down away on in")

ENGLISH_WORDS = _set(
    """a an the and or but if then than that this these those it its is are was were be been being am do
    does did has have had can could may might should must will would shall not no never none nor neither
    either of in on at for with by from to into over under between among within without during after before
    about against as so such very more most less least also only both each all any some other another
    there here who which what when where why how while whereas although though because since until unless
    he she they we you i me us them his her their our your my one two three first second few many much
    yes well often usually always sometimes rarely still even just however therefore thus alone daily
    patient patients treatment therapy dose doses dosing risk risks disease diseases drug drugs stroke
    prevention effective adequate recommended type diabetes blood pressure heart failure infection
    infections pain fever cancer study studies trial trials evidence mortality adults children women men
    safe safety benefit benefits harm side effect effects first line weight loss gain kidney liver lung
    acute chronic severe mild moderate high low normal increase increases increased reduce reduces reduced
    cause causes caused prevent prevents treat treats treated use used given give needed need needs
    should avoid avoided contraindicated indicated therapy year years day days week weeks month months
    clinical trial guideline guidelines cardiovascular events event rate rates level levels test tests
    diagnosis symptoms symptom history bleeding surgery care hospital doctor doctors nurse clinician
    virus viral bacterial antibiotic antibiotics vaccine vaccines cold flu influenza atrial fibrillation
    insulin aspirin warfarin metformin statin statins hypertension pregnancy pregnant elderly older"""
)
FOREIGN_WORDS = _set(
    """el la los las del al un una unos unas es son está están ser estar para por pero como muy más menos
    también pacientes paciente tratamiento riesgo enfermedad que se su sus y ni der das dem des ein eine
    einen einem und oder nicht ist sind mit für von bei zu auf aus auch nur kein keine sehr wird werden
    patienten behandlung ausreichend le les du une et ou sont avec pas dans sur aux chez traitement il gli
    della delle sono è anche più pazienti trattamento os um uma não são com pelo pela mais het een en niet
    zijn voor ook geen wordt worden"""
)
"""Function words of Spanish, German, French, Italian, Portuguese and Dutch that are no English words
(so "plus", "met", "con", "per" are left out: "Capmatinib binds MET" is English)."""

# --- look-ups -----------------------------------------------------------------------------------------------


def key(token: str) -> str:
    """A token's lookup form: lower case, curly apostrophes straightened, edge punctuation removed."""
    return token.lower().replace("’", "'").strip(".,;:!?\"“”()[]{}‘'")


def third_person(lemma: str) -> str:
    """reduce -> reduces, carry -> carries, have -> has (the "-s" of "Does X reduce" -> "X reduces")."""
    special = {"have": "has", "do": "does", "be": "is", "go": "goes"}
    if lemma in special:
        return special[lemma]
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if len(lemma) > 2 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ies"
    return lemma + "s"


def past_tense(lemma: str) -> str:
    """reduce -> reduced, stop -> stopped, take -> took."""
    if lemma in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[lemma].split()[0]
    if lemma in _DOUBLING:
        return lemma + lemma[-1] + "ed"
    if lemma.endswith("e"):
        return lemma + "d"
    if len(lemma) > 2 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ied"
    return lemma + "ed"


def _verb_forms() -> dict[str, tuple[str, str]]:
    """Every inflected form of ``VERBS`` -> (lemma, "base" | "3sg" | "past")."""
    forms: dict[str, tuple[str, str]] = {}
    for lemma in sorted(VERBS):
        for word, form in ((past_tense(lemma), "past"), (third_person(lemma), "3sg"), (lemma, "base")):
            forms[word] = (lemma, form)
        for word in _IRREGULAR_PAST.get(lemma, "").split()[1:]:
            forms.setdefault(word, (lemma, "past"))
    return forms


_VERB_FORMS = _verb_forms()


def lemma_of(word: str) -> tuple[str, str] | None:
    """(lemma, "base" | "3sg" | "past") of a known verb form, else None."""
    return _VERB_FORMS.get(word)


def is_adverb(word: str) -> bool:
    """A known adverb, or an "-ly" word that is not a known non-adverb ("family", "supply")."""
    return word in ADVERBS or (len(word) > 4 and word.endswith("ly") and word not in _NOT_ADVERBS)


def looks_adjectival(word: str, raw_word: str) -> bool:
    """A lower-case word that looks like an adjective ("clinical", "genetic", "adverse" is not caught)."""
    return (
        raw_word.islower()
        and word.endswith(("al", "ic", "ive", "ous", "ful", "ary"))
        and word not in NOT_ADJECTIVE_NOUNS
    )


def lower_first(tokens: list[str]) -> None:
    """Lower-case a sentence-initial common word in place ("Metformin" -> "metformin"); keep names."""
    if tokens and tokens[0] == "A":
        tokens[0] = "a"
    elif tokens and re.fullmatch(r"[A-Z][a-z]+(?:-[a-z]+)*,?", tokens[0]):
        nxt = tokens[1] if len(tokens) > 1 else ""
        word = tokens[0].rstrip(",").lower()
        function_word = word in DETERMINERS | PREPOSITIONS | LEAD_WORDS
        name = re.fullmatch(r"[A-Z][a-z]+\W*", nxt) is not None  # "Crohn Disease", but not "Vitamin K"
        if function_word or (word not in PROPER_WORDS and not name):
            tokens[0] = tokens[0].lower()


def join(tokens: list[str]) -> str:
    """Tokens back to text: empty tokens dropped, no space before ",;:)", no trailing punctuation."""
    text = " ".join(t for t in tokens if t)
    return re.sub(r"\s+([,;:)])", r"\1", text).strip().rstrip(".,;:!?").strip()
