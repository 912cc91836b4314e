"""Sentence templates for synthetic notes and reports (see ``text.py`` syntax).

``[a|b]`` picks one alternative, ``{slot:arg}`` calls the method registered
as that slot (``synthetic.slots``).
Templates carry no final punctuation: the document style adds it, so one
template yields terse nursing fragments and full report sentences alike.
PHI slots are spread over many contexts (social history, transfers,
follow-up, signatures, specimen labels) so a tagger learns the cues rather
than positions.
"""

from __future__ import annotations

# --- nursing notes -----------------------------------------------------------

NURSING_TITLES = (
    "[CCU|MICU|SICU|CSRU|CCU NSG|Micu|Nsg|NICU] [nsg|nursing|NSG] [admission "
    "note|progress note|note]"
    "[ {time}| 7a-7p| 7p-7a| 11p-7a|: {date:today,short}|]",
    "[NPN|Npn|npn] [7a-7p|7p-7a|3-11|11-7|days|nights][ {date:today,short}|]",
    "[Nursing Progress Note|NURSING PROGRESS NOTE|Nursing Note|Nursing Transfer Note]"
    "[ {date:today}|]",
    "[Respiratory Care|Resp care|RESPIRATORY CARE NOTE][:|]",
    "[Addendum|ADDENDUM|addendum][ to nsg note| {time}|]",
    "[Social Work|SOCIAL WORK|Case Management] [note|follow-up|Assessment]",
)

NURSING_ADMIT = (
    "{age} [YEAR OLD|yo|y/o|year old|YO|yr old|-year-old] {sex} "
    "[admitted|ADMITTED|adm|transferred] "
    "[in transfer from|from|via EW from] {hosp:other} [for|with|after] {dx}",
    "pt is a {age}[yo|y/o| yo| year old] {sex:letter} [who is followed at|known "
    "to|followed at] "
    "{hosp} by {dr}",
    "[PMH|pmh|PMHx|Past hx|PMH:]: {pmh}",
    "[HPI|hpi|Hx]: {sx} x [{n:2-10} days|{n:2-5} wks|{n:2-24} hrs|1 week]",
    "{date:prior,short} [found by|brought in by|called 911, per] {rel} [on floor|at "
    "home|on kitchen floor|"
    "unresponsive]",
    "[arrived|transferred to {hosp:,abbr}|admitted to unit|came up from EW] "
    "[approx.|at|@|around] {time}"
    "[ via ambulance| from {hosp:other}| from cath lab|]",
    "[to|taken to] {hosp:other} [ER|EW|ED|hosp] [where|and] [head CT neg|CT neg for "
    "bleed|"
    "started on {abx}|intubated for airway protection]",
    "[referred to|transferred to|sent to] {hosp:,abbr} [for further eval|for cath|for "
    "higher level of care]",
    "s/p {proc} [on|in] {date:past}",
    "[MI|CABG|cva|PTCA|AVR|MVR] [in|] {date:past,year}",
    "pt [of|followed by|seen by|known to] {dr} [at|from] {hosp}",
    "[pt's PCP is|PCP|pcp:] {pcp}[ ({phone:hosp})| at {hosp}|]",
)

NURSING_SYSTEMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "neuro": (
        ("NEURO:", "Neuro:", "NEURO-", "neuro:", "N:", "NEURO/MS:", "Neuro-", "NEURO "),
        (
            "[A&Ox3|A&OX3|alert and oriented x3|AOx3|oriented x2|alert, oriented to "
            "person only|"
            "lethargic but arousable|sedated on propofol {n:10-50} mcg/kg/min], "
            "[MAE|moving all "
            "extremities|follows commands|PERRL|pupils 3mm brisk]",
            "[no seizure activity noted|denies pain|c/o pain {pain}, medicated with "
            "{med}|"
            "CIWA scores {n:0-15}|restless overnight, haldol {n:1-5} mg iv given with "
            "good effect]",
            "GCS {n:3-15}",
            "[pt|patient] [confused at times|reoriented frequently|calm and "
            "cooperative|anxious, "
            "ativan {n:1-2} mg given|sleeping in naps]",
            "[strength|grasps] {strength} [bilat|R>L|L>R|all 4 ext]",
            "[speech clear|speech slurred|aphasic], [MAE|no focal deficits|L sided "
            "weakness]",
        ),
    ),
    "cv": (
        ("CV:", "C/V:", "CV-", "cv:", "CARDIAC:", "Cardiac-", "CV ", "CVS:"),
        (
            "[HR|hr|HR:] {hr} [NSR|SR|ST|AFIB|afib with RVR|paced|SB] [no "
            "ectopy|occasional "
            "PVCs|rare PACs|]",
            "[BP|bp|SBP] {bp}[-{bp}| range {bp}-{bp}| MAP {n:55-110}|]",
            "[lopressor|metoprolol|Lopressor] {dose} [po|iv|IV] given [for HR {hr}|as "
            "ordered|]",
            "[+PP|pulses palpable|pedal pulses dopplerable|extremities warm|cool "
            "extremities], "
            "[no edema|+{n:1-3} edema BLE|trace edema]",
            "{lab} [repleted with KCL {n:2-6}0 meq|no repletion needed|recheck "
            "pending]",
            "heparin gtt at {n:500-1500} u/hr, PTT {n:30-120.1}[, rate adjusted per "
            "protocol|]",
            "[dopamine|levophed|neo|dobutamine] [weaned off|at {n:2-10} "
            "mcg/kg/min|titrated to "
            "keep MAP > 60]",
            "[BP stable off dopamine|hemodynamically stable|HR 80s-90s|SBP 90s-100s]",
            "{med} [given|started|held for {lab}]",
            "[DDD|VVI|dual chamber] pacer[ (SN {device})|, serial #{device}|, ID "
            "{device}]",
        ),
    ),
    "resp": (
        ("RESP:", "Resp:", "RESP-", "resp:", "R:", "Pulm:", "RESP ", "Respiratory:"),
        (
            "[LS|lungs|breath sounds|ls] [clear|coarse|diminished at bases|with "
            "crackles at bases|"
            "with exp wheezes|rhonchorous] [bilat|throughout|R>L|]",
            "[O2 sat|SAT|SpO2|sats|sat] {sat}[%|] [on|] [{n:2-6}L NP|{n:2-6}L "
            "NC|RA|room air|"
            "{n:4-10}0% face mask|50% cool neb|{n:2-6}LNP]",
            "[vent settings|on vent|vent:] {vent}. ABG {abg}",
            "[sxn for|suctioned for|producing] [sm|mod|lg] amts [thick|thin] "
            "[white|yellow|tan] "
            "sputum",
            "[IS|incentive spirometer] encouraged, [pulling|reaching] {n:500-1500} ml",
            "[RR|rr|resp rate] {rr}[ unlabored| and even| with occ use of accessory "
            "muscles|]",
            "[nebs given|albuterol/atrovent nebs q4h|CPT done] [with good effect|per "
            "RT|]",
        ),
    ),
    "gi": (
        ("GI:", "G.I.:", "GI-", "gi:", "ABD:", "GI ", "GI/Nutrition:"),
        (
            "abd [soft|soft, nontender|distended|obese|firm], [+BS|bs "
            "present|hypoactive bs|no bs]",
            "[tolerating|taking|on] [clears|regular diet|cardiac diet|TF at {n:20-80} "
            "cc/hr|sips|"
            "pureed diet] [well|poorly|]",
            "[no BM|BM x{n:1-3}|passing flatus|loose brown stool, guaiac neg|colace "
            "and senna given]",
            "[FS|fingerstick|BS|blood sugar] {n:60-320}, [covered with {n:2-10} units "
            "RISS|no "
            "coverage needed|insulin gtt at {n:1-8} u/hr]",
            "[protonix|pepcid|Protonix] {dose} [iv|IV|po] [qd|bid|daily]",
            "[appetite poor|ate {frac} of dinner|ate {n:25-100}% of breakfast|NPO "
            "after MN]",
            "{med}",
        ),
    ),
    "gu": (
        ("GU:", "G/U:", "GU-", "gu:", "Renal:", "GU ", "RENAL/GU:"),
        (
            "[foley|Foley|f/c] draining [clear|cloudy|amber|clear yellow|cl yel] "
            "urine[, {n:20-150} "
            "[cc|ml]/hr|]",
            "[UO|U/O|urine output] [adequate|marginal|>{n:30-60}cc/hr|{n:200-900} cc "
            "this shift]",
            "BUN/Cr {n:10-90}/{n:0.6-4.5.1}[, lasix {n:2-8}0 mg iv given with good "
            "response|]",
            "[voiding|QS|qs] [via urinal|in commode|without difficulty|]",
            "[I/O|I&O|i/o] [+{n:100-2500}|-{n:100-2500}|even] [for shift|since MN|]",
            "{lab}",
        ),
    ),
    "skin": (
        ("SKIN:", "Skin:", "SKIN-", "skin:", "Integ:", "Skin "),
        (
            "[skin intact|coccyx reddened, duoderm applied|stage {n:1-3} decub on "
            "sacrum|incision "
            "c/d/i|dsg dry and intact|red rash groin, nystatin powder ordered]",
            "[turned q2h|repositioned q2h|on air mattress][, heels elevated|, skin "
            "care done|]",
        ),
    ),
    "id": (
        ("ID:", "I.D.:", "ID-", "id:", "ID "),
        (
            "[Tmax|T max|temp|t] {temp}, [WBC|wbc] {n:2.1-24.9.1}",
            "[on|abx:|cont] {abx}[, cx pending|, blood cx x2 sent|]",
            "[afebrile|febrile to {temp}, tylenol {n:325-650} mg given|cultures "
            "pending|"
            "no new cx data]",
        ),
    ),
    "lines": (
        ("ACCESS:", "Lines:", "LINES-", "access:", "IV access:"),
        (
            "[R|L|r|l] [SC|IJ|femoral|subclavian] [TLC|CVL|cordis] "
            "[patent|intact|placed "
            "{date:today,short}]",
            "[#{n:18-22} PIV R FA|{n:18-22}g PIV L hand|PICC line flushes well|A-line "
            "R radial]",
        ),
    ),
    "social": (
        (
            "SOCIAL:",
            "Social:",
            "SOC:",
            "social:",
            "Family:",
            "FAMILY:",
            "psychosocial:",
            "SOCIAL-",
            "Dispo:",
        ),
        (
            "{rel} [in to visit|called|phoned for update|at bedside|visited this "
            "evening|in "
            "today], [updated on plan of care|questions answered|updated by {dr}|very "
            "supportive|spoke with {dr}]",
            "[HCP|health care proxy|health care proxy is|hcp] {rel}[ - {phone:rel}| "
            "({phone:rel})| #{phone:rel}| tel {phone:rel}|]",
            "[family meeting|fam mtg|family mtg] with {dr} and {rel} [today|this "
            "am|planned for "
            "{date:future,short}|on {date}]",
            "pt lives [alone|with {rel}|with family] in {city}[, {state}|]",
            "[pt is a retired|pt works as a|former|pt is a] {job}[ at {employer}|]",
            "[contact|call|please call] {rel:name} at {phone:rel} [with any changes|if "
            "needed|"
            "re: consent|overnight]",
            "[full code|DNR/DNI|DNR|Full Code], [confirmed with|discussed with|per] "
            "{rel}",
            "[case mgmt|CM|social work|SW] [following|aware], [screening for|plan d/c "
            "to|"
            "accepted at] {hosp:facility}",
            "{pt} [is|was] [very pleasant|cooperative|tearful at times|asking to go "
            "home|"
            "requesting to speak with {dr}]",
            "{rel} [will be in|coming in|plans to visit] [tomorrow|in "
            "am|{date:future,short}|"
            "after work]",
            "[lives at|from] {hosp:facility}[ in {city}|]",
            "pt lives at {street}[ in {city}|][, 2nd floor walkup| with stairs|]",
            "{rel:rel} {rel:name} [called from|lives in] {city}[, {state}|]",
            "[surgeon|cardiologist|fellow|team] from {hosp:other} [in|came in|here] "
            "to [see pt|talk with pt|discuss options]",
            "[pt|{he}] [wants to|would like to|hopes to] [go|return|go back] to "
            "{hosp:facility}[ after d/c|]",
            "{rel:rel} [lives|is staying] [nearby in|in|out in] {city}[ and will be in "
            "later|, will visit tomorrow|]",
            "{rel:rel} [works for|just started a new job at|works at] {employer}",
            "[pt lives in|family from|{rel:rel} lives in|pt from] {region}[ area|]",
            "{rel:first} [called|in to visit|phoned for update] [, questions "
            "answered|, updated by RN|]",
        ),
    ),
    "plan": (
        ("PLAN:", "Plan:", "P:", "plan:", "A/P:", "PLAN-", "Plan-"),
        (
            "[cont to monitor|monitor|follow] [hemodynamics|resp "
            "status|I&O|lytes|K|BP], "
            "[f/u {lab} in am|am labs|repeat K at {time}]",
            "[to|for] {proc} [today|tomorrow|on "
            "{date:future,short}|{date:future,short}]",
            "[possible transfer to floor|call out to floor|transfer to "
            "{hosp:other}|d/c to "
            "{hosp:facility}] [in am|when bed available|{date:future,short}]",
            "[MD|team|covering MD|Dr {dr:last}|{dr}] [aware|notified|made aware] "
            "[of|re] "
            "[BP {bp}|HR {hr}|{lab}|UO|low sats]",
            "[cont|continue] [supportive care|current plan|diuresis|abx|to wean vent "
            "as tol]",
            "[support pt and family|update family|emotional support to pt and "
            "{rel:rel}]",
        ),
    ),
}

NURSING_FREE = (
    "[pt|Pt|patient] [seen|evaluated|examined] by {dr} [today|this am|at {time}|on "
    "{date:today,short}]",
    "[discussed with|d/w|spoke with] {dr} [re: plan|about {lab}|regarding dispo]",
    "[see|per] [flowsheet|careview|FHP] for [details|vs|objective data]",
    "vs: T {temp} HR {hr} BP {bp} RR {rr} sat {sat}%",
    "[BP|bp] {bp}{vsep}HR {hr}{vsep}RR {rr}{vsep}SpO2 {sat}%{vsep}T {temp}",
    "{med}",
    "[received|rec'd] pt [from|in] [EW|PACU|cath lab|floor] at {time}",
    "[labs|am labs]: {labs}",
    "{lab}, [repleted|to be repleted|md aware]",
    "[pt c/o|complained of] {sx}[, {med} given|]",
    "[pt|patient] [slept|rested] [well|poorly|in naps] [overnight|this shift]",
    "{n:1-2} [units|u] PRBC [given|transfused] for hct {n:21-27.1}",
    "[fluid bolus|NS {n:250-1000} cc bolus] given [for SBP {n:70-89}|with good effect]",
    "[pt|patient] out of bed to chair [with assist of {n:1-2}|x{n:1-2} hrs|tolerated "
    "well]",
    "[wt|weight] {n:45-140.1} kg",
    "[repeat|f/u] [CXR|ekg|EKG|head CT] [done|pending|read as no change]",
    "[in|on] {date:prior,short} [pt had|s/p|s\\p] {proc}",
    # Staff other than the physician, named the way nursing notes name them.
    "{dr:staff} [aware|notified|made aware|paged|in to see pt|updated]",
    "[talked with|spoke with|d/w|called] {dr:staff} from [case management|social "
    "work|PT|nutrition|pharmacy|admitting|the blood bank|nsg agency]",
    "[nsg|RN|nursing] ({dr:init} and {dr:init}) [verified|counted|witnessed] "
    "[valuables|belongings|amt of cash]",
    "[to meet|will meet|met with] {dr:init} [of|from] [VNA|case mgmt|hospice] "
    "[at {time}|tomorrow|today]",
    "{pt:title} [resting comfortably|aware of plan|tearful|fair]",
    "{rel:title} [aware|updated|at bedside|called] [re: plan|this eve|]",
    # Shapes the corpus has few of, each in the context that says PHI: a
    # pager after its cue, year-less dates of clinical events, two doctors
    # after one title, a surname after MD, a relative's first name alone.
    "[paged|pg'd|paged covering MD|called] {dr} [at|@|on|] [pager #|PG|pg #|pgr|"
    "pager|beeper #|PG#] {phone:pager}[, awaiting call back| re: {lab}|]",
    "{dr:staff} [(pager {phone:pager})|pg {phone:pager}|PG {phone:pager}|pgr "
    "#{phone:pager}] [aware|notified|called back|in to see pt]",
    "[blood cx|BC|bld cx|urine cx|sputum cx|stool for c diff|cx] [drawn|sent|sent "
    "off|obtained|done] [on|] {date:prior,md} [still pending|neg to date|grew "
    "GNR|no growth so far|]",
    "[surgery|cath|EGD|bronch|TEE|line change|PICC|trach|peg] [done|performed|"
    "placed|changed] [on|] {date:prior,md}[ without incident| at {hosp:other}|]",
    "[on abx|in micu|at {hosp:other}|intubated|on levo|NPO] {date:prior,range}",
    "[dressing|line|foley|trach ties] [due to be changed|last changed|to be "
    "changed] [on the|the] {date:future,ordinal}",
    "[transferred from|pt from|lives in|family in|d/c home to] {region}[, "
    "{state}|]",
    "{dr:drs} [in to see pt|aware|at bedside|notified|updated]",
    "[MD|md|HO] {dr:last} [aware|notified|at bedside|in to see pt]",
    "{rel:first} [called|in to visit|at bedside|phoned][, updated on plan| and "
    "was updated| this eve|]",
)

# --- discharge summaries -----------------------------------------------------

DS_HEADER = (
    "[Name|NAME|Patient Name|Patient]: {pt:header}{hsep}[Unit No|MRN|MR#|Med Rec "
    "#|Unit No.]"
    "[:|] {mrn}\n",
    "[Admission Date|ADMISSION DATE|Date of Admission]: {date:adm,full}{hsep}"
    "[Discharge Date|DISCHARGE DATE|Date of Discharge]: {date:dc,full}\n",
    "[Date of Birth|DOB|D.O.B.|DATE OF BIRTH]: {date:dob,full}{hsep}[Sex|SEX]: "
    "{sex:letter}\n",
    "[Service|SERVICE]: "
    "[MEDICINE|CARDIOLOGY|SURGERY|NEUROLOGY|CSURG|MICU|ORTHOPAEDICS]\n",
)
DS_HEADER_OPTIONAL = (
    "[Attending|ATTENDING|Attending Physician]: {att:name}\n",
    "[Primary Care Physician|PCP|Primary care]: {pcp:name}[ ({phone:hosp})|, "
    "{hosp}|]\n",
    "[Address|ADDRESS|Home address]: {addr}\n",
    "[Phone|Home phone|Tel|Telephone]: {phone}\n",
    "[SSN|Social Security #|Soc Sec No]: {ssn}\n",
    "[Account|Acct #|Account No|ACCOUNT]: {acct}\n",
    "[Insurance|Health plan|Member ID]: {plan}\n",
    "[Email|E-mail|Patient e-mail]: {email}\n",
    "[Admitted to|Unit|Room]: [MICU|CCU|7 North|4W|SICU] [room|rm|bed] {room}\n",
)

DS_COURSE = (
    "# {dx}: [treated with|started on|continued on] {med}[ with improvement|]",
    "[The patient|{pt}|{pt:title}] was [admitted to|transferred to] the "
    "[MICU|CCU|floor] [on|] {date:adm}",
    "[Cardiology|Renal|GI|ID|Surgery] was consulted[ ({dr})|, {dr},|] and "
    "recommended {proc}",
    "{he:cap} underwent {proc} on {date} [without complication|by {dr}]",
    "{lab} on {date:adm,short}, [repleted|improved with IVF|trended down]",
    "[Goals of care were discussed|A family meeting was held] with {rel} on "
    "{date}[ with {dr}|]",
    "{he:cap} was [diuresed|transfused {n:1-3} units PRBC|weaned off pressors] "
    "[with good effect|over {n:2-5} days]",
    "[{his:cap}|The] [course was complicated by|stay was notable for] {dx}",
    "# [FEN|Code|Access|PPx]: [full code|DNR/DNI confirmed with {rel}|PIV|SC heparin]",
    "[{he:cap} was seen by|Seen in consultation by] {dr} on {date}, who "
    "[recommended {proc}|agreed with the plan|suggested {med}]",
    "[Repeat|Follow-up] {lab} on {date:short}",
    "{he:cap} [remained|was] [afebrile|hemodynamically stable|on {abx}] "
    "[through|until] {date:dc}",
    "[Per|After discussion with] {his} {rel:rel} {rel:name}, {he} [wished to go "
    "home|agreed to rehab at {hosp:facility}|was made DNR]",
    "[Imaging|CT|Echo] on {date} showed [no change|improvement|a new effusion]",
)

DS_SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (heading, style, templates)
    (
        "[Chief Complaint|CHIEF COMPLAINT|Chief complaint]:",
        "prose",
        (
            "{sx}",
            "{sx} and {sx}",
            "[transfer from|sent from] {hosp:other} for {dx}",
        ),
    ),
    (
        "[History of Present Illness|HISTORY OF PRESENT ILLNESS|HPI]:",
        "prose",
        (
            "[{pt}|{pt:title}|The patient|{pt:full}] is a {age}[-year-old| year old| "
            "yo| "
            "y/o] {sex:noun} "
            "with [a history of|PMH significant for|h/o] {pmh} who "
            "[presents|presented] "
            "with {sx}",
            "{he:cap} was in {his} usual state of health until {date:prior}, when {he} "
            "developed {sx}",
            "{he:cap} was [seen|evaluated] at {hosp:other} on {date:prior}[ by {dr}|] "
            "and "
            "[started on {abx}|found to have {dx}|transferred for further management]",
            "In the [ED|ER|EW], vitals were T {temp} HR {hr} BP {bp} RR {rr} {sat}% "
            "[RA|on "
            "{n:2-6}L]",
            "[Labs|Initial labs] [were notable for|showed] {labs}",
            "{he:cap} [was given|received] {med} and [admitted to|transferred to] the "
            "[MICU|floor|CCU]",
            "[Per|According to] {his} {rel:rel}, {he} had been [more confused|eating "
            "poorly|falling] "
            "for [{n:2-10} days|several weeks]",
            "{he:cap} [denies|reports] {sx}",
        ),
    ),
    (
        "[Past Medical History|PAST MEDICAL HISTORY|PMH]:",
        "list",
        (
            "{pmh}",
            "s/p {proc} [in|] {date:past,year}",
            "{proc} [at|in] {hosp:other} [in|] {date:past,my}",
            "[MI|CVA|DVT] {date:past,my}",
            "{pmh} [followed by|per] {pcp}",
        ),
    ),
    (
        "[Social History|SOCIAL HISTORY|Social Hx]:",
        "prose",
        (
            "[Lives|{he:cap} lives] [with {rel}|alone|with family] in {city}[, "
            "{state}|]",
            "[Retired|Works as a|Former] {job}[ at {employer}|]",
            "[Quit smoking in {date:past,year}|{n:10-80} pack-year history|Denies "
            "tobacco|"
            "Occasional EtOH]",
            "{he:cap} [lives with|is close to|is supported by] {his} {rel:rel}[ "
            "{rel:name}|]",
            "[Contact|Emergency contact|HCP]: {rel}[ {phone:rel}| ({phone:rel})|, "
            "phone "
            "{phone:rel}]",
            "[Address|Lives at]: {addr}",
            "[Receives services from|Followed by] {org}",
        ),
    ),
    (
        "[Family History|FAMILY HISTORY]:",
        "prose",
        (
            "[Mother|Father|Brother|Sister] with [CAD|DM|breast cancer|colon "
            "cancer|stroke] [at age "
            "{n:40-80}|]",
            "Noncontributory",
            "[No family history of|Denies family history of] "
            "[CAD|sudden death|malignancy]",
        ),
    ),
    (
        "[Physical Exam|PHYSICAL EXAMINATION|Exam on admission]:",
        "prose",
        (
            "[VS|Vitals|VITALS]: T {temp}, BP {bp}, HR {hr}, RR {rr}, O2 sat {sat}% "
            "[RA|on "
            "{n:2-6}L NC]",
            "[GEN|General]: [NAD|elderly {sex} in mild distress|alert, pleasant]",
            "[HEENT|Heent]: [PERRL, EOMI|MMM, OP clear|anicteric]",
            "[CV|Cardiac]: [RRR|irregularly irregular], [no m/r/g|{n:2-3}/6 SEM at "
            "LUSB]",
            "[Lungs|Pulm]: [CTAB|crackles at bases bilaterally|decreased BS at R base]",
            "[Abd|Abdomen]: [soft, NT/ND, +BS|obese, soft, mild RUQ tenderness]",
            "[Ext|Extremities]: [no c/c/e|{n:1-3}+ pitting edema to knees|warm, well "
            "perfused]",
            "[Neuro|NEURO]: [A&Ox3, CN II-XII intact|strength {strength} "
            "throughout|nonfocal]",
        ),
    ),
    (
        "[Pertinent Results|PERTINENT RESULTS|Labs]:",
        "lines",
        (
            "{date:adm,yyyy-mm-dd} {time} BLOOD WBC-{n:2.1-24.9.1} RBC-{n:2.8-5.2.2} "
            "Hgb-{n:7.0-15.5.1} "
            "Hct-{n:21-45.1} Plt Ct-{n:40-450}[ K/uL| x10^3/uL|]",
            "{date:adm,yyyy-mm-dd} {time} BLOOD Glucose-{n:60-380} UreaN-{n:6-95} "
            "Creat-{n:0.5-4.9.1} "
            "Na-{n:124-149} K-{n:2.8-5.9.1} Cl-{n:90-112} HCO3-{n:14-32}",
            "[CXR|Chest x-ray] {date:adm,short}: [no acute process|bilateral "
            "effusions|RLL "
            "infiltrate]",
            "[ECHO|TTE] {date}: EF {n:15-65}%, [mild MR|moderate TR|no effusion]",
            "{labs}",
        ),
    ),
    (
        "[Brief Hospital Course|HOSPITAL COURSE|Hospital Course]:",
        "prose",
        DS_COURSE,
    ),
    (
        "[Medications on Admission|MEDICATIONS ON ADMISSION|Discharge "
        "Medications|DISCHARGE "
        "MEDICATIONS]:",
        "numbered",
        (
            "{med}",
            "{med}",
            "{med}",
        ),
    ),
    (
        "[Discharge Disposition|DISCHARGE DISPOSITION|Disposition]:",
        "prose",
        (
            "[Extended Care|Home With Service|Home|Rehab]",
            "[Facility|Extended Care Facility]: {hosp:facility}[ - {city}|]",
            "[Home with services from|VNA:|Services:] {org}",
        ),
    ),
    (
        "[Discharge Diagnosis|DISCHARGE DIAGNOSES|Diagnoses]:",
        "list",
        ("{dx}", "{dx}", "{pmh}"),
    ),
    (
        "[Followup Instructions|FOLLOW-UP|Follow up]:",
        "prose",
        (
            "[Follow up with|Please see|Appointment with] {pcp} in [1-2 weeks|{n:1-4} "
            "weeks|"
            "{n:3-14} days][. Call {phone:hosp} to schedule|]",
            "[Provider|PROVIDER]: {dr:name}[, MD|] [Phone|PHONE]:{phone:hosp} "
            "[Date/Time|"
            "DATE]:{date:future,full} {time}",
            "[Appointment|Appt] [with|at] [{dr}|the {hosp} clinic] on {date:future} at "
            "{time}",
            "[Call|Contact] {dr} at {phone:hosp}[ or page {phone:pager}|] with "
            "[questions|any "
            "concerns]",
            "[Results will be available at|Register for the patient portal at] {url}",
            "[Fax|Please fax] [records|summary] to {phone:fax}",
        ),
    ),
)

DS_SIGNATURE = (
    "{att:sig}[ {lic}|]\n",
    "[Completed by|Dictated By|Dictated by]: {dr:name}[, MD|] {date:dc,full} {time}\n",
    "D: {date:dc,full} {time}\nT: {date:future,full} {time}\nJOB#: {acc}\n",
    "[cc|CC|Copies to]: {pcp:name}[, {hosp:other}|]\n",
    "[Electronically signed by|Signed electronically by] {att:name}[, MD|] on "
    "{date:dc,full}\n",
)
