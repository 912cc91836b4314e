"""Sentence templates of radiology and pathology reports (syntax: ``phrases.py``).

Apart from the nursing-note and discharge-summary templates of
:mod:`deid_pipeline.synthetic.phrases` only for size: the same template
language, the same slots.
"""

from __future__ import annotations

# --- radiology ---------------------------------------------------------------

RAD_EXAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    # exam: (technique, findings, impression)
    "CHEST (PA AND LAT)": (
        ("PA and lateral views of the chest", "Single portable AP view of the chest"),
        (
            "The lungs are [clear|hyperinflated|well expanded]",
            "There is [a|a small|a moderate] [right|left] [lower lobe|upper "
            "lobe|basilar] "
            "[opacity|consolidation|atelectasis]",
            "Heart size is [normal|mildly enlarged|at the upper limits of normal]",
            "[No|Small bilateral|Small left] pleural [effusion|effusions] [or "
            "pneumothorax|]",
            "[ET tube|Endotracheal tube] terminates {n:2-7} cm above the carina",
            "[Right|Left] IJ [catheter|line] tip [in the SVC|at the cavoatrial "
            "junction]",
            "Osseous structures are [unremarkable|notable for degenerative change]",
            "Mediastinal and hilar contours are [normal|unchanged]",
        ),
        (
            "[No acute cardiopulmonary process|Findings consistent with pneumonia]",
            "[Interval improvement|No significant change] [since|compared to] "
            "{date:prior}",
            "[Mild|Moderate] pulmonary edema",
        ),
    ),
    "CT HEAD W/O CONTRAST": (
        (
            "Axial images of the head were obtained without IV contrast",
            "Contiguous axial CT images from skull base to vertex",
        ),
        (
            "There is no [acute intracranial hemorrhage|mass effect|midline shift]",
            "[Mild|Moderate] periventricular white matter hypodensities [are seen|are "
            "noted]",
            "Ventricles and sulci are [age-appropriate|prominent]",
            "The visualized paranasal sinuses are [clear|notable for mucosal "
            "thickening]",
            "Gray-white differentiation is preserved",
        ),
        (
            "No acute intracranial abnormality",
            "[Chronic small vessel ischemic change|Age-related volume loss]",
        ),
    ),
    "CT ABDOMEN/PELVIS W/ CONTRAST": (
        (
            "Helical CT of the abdomen and pelvis after {n:80-120} mL of IV contrast",
            "Axial images with coronal and sagittal reformats",
        ),
        (
            "The liver is [normal in size|enlarged], with a [~|approximately ]{size} "
            "hypodense "
            "lesion in segment "
            "{n:2-8}",
            "The gallbladder is [unremarkable|distended with stones]",
            "The pancreas, spleen and adrenal glands are [unremarkable|normal]",
            "[There is no|There is mild] free fluid [in the pelvis|]",
            "[Diverticulosis without diverticulitis|Wall thickening of the sigmoid "
            "colon]",
            "A {size} [simple cyst|nonobstructing stone] [in the left kidney|in the "
            "right "
            "kidney]",
            "No lymphadenopathy",
        ),
        (
            "[No acute intra-abdominal process|Findings consistent with acute "
            "diverticulitis]",
            "{size} [hepatic lesion|renal cyst], [likely benign|recommend MRI "
            "follow-up]",
        ),
    ),
    "MRI BRAIN W/WO": (
        ("Sagittal T1, axial FLAIR, DWI and post-gadolinium T1 images",),
        (
            "There is [no|a small] focus of restricted diffusion [in the left MCA "
            "territory|]",
            "No abnormal enhancement",
            "[Scattered|Confluent] T2/FLAIR hyperintensities",
            "Major intracranial flow voids are preserved",
        ),
        (
            "[No acute infarct|Acute left MCA infarct]",
            "[Chronic microvascular disease|No mass]",
        ),
    ),
    "US ABDOMEN": (
        ("Grayscale and color Doppler images of the abdomen",),
        (
            "The liver is [normal in echotexture|echogenic, consistent with fatty "
            "infiltration]",
            "The common bile duct measures {n:2-9} mm",
            "[No|Several] gallstones",
            "The right kidney measures {n:9-12.1} cm",
        ),
        ("[Cholelithiasis without cholecystitis|Unremarkable abdominal ultrasound]",),
    ),
    "BILATERAL SCREENING MAMMOGRAM": (
        ("Standard CC and MLO views of both breasts",),
        (
            "The breasts are [heterogeneously dense|almost entirely fatty|scattered "
            "fibroglandular]",
            "[No suspicious masses|A {size} oval circumscribed mass at "
            "{n:1-12} o'clock]",
            "No suspicious calcifications",
        ),
        ("BI-RADS {n:1-4}: [Negative|Benign|Probably benign, 6 month follow-up]",),
    ),
}

RAD_HEADER = (
    "[{hosp} |]DEPARTMENT OF [RADIOLOGY|DIAGNOSTIC IMAGING]\n",
    "[EXAM|EXAMINATION|Exam]: {exam}\n",
    "[PATIENT|Patient|NAME]: {pt:header}{hsep}[MRN|MR#|Med Rec No.|MRN:][:|] {mrn}\n",
    "[DOB|D.O.B.|Date of birth]: {date:dob,full}{hsep}[AGE|Age]: {age}[Y|y| years|]\n",
    "[ACCESSION|Accession #|ACC #|Accession No.]: {acc}{hsep}[DATE OF "
    "SERVICE|Exam Date|"
    "DATE]: {date:today,full}[ {time}|]\n",
    "[ORDERING PHYSICIAN|Referring Physician|Ordered by]: {dr:name}[, MD|]\n",
)

RAD_SECTIONS = (
    (
        "[CLINICAL HISTORY|HISTORY|INDICATION|CLINICAL INFORMATION]:",
        (
            "{age} year old {sex:noun} with {sx}[, eval for {dx}|. ? {dx}|]",
            "[s/p|status post] {proc} [on|] {date:prior,short}[, r/o {dx}|]",
            "{sx}. [Hx|h/o] {pmh}",
        ),
    ),
    (
        "[COMPARISON|Comparison]:",
        (
            "[Prior study|Comparison is made to the study] of {date:prior}",
            "[CT|Radiograph|MRI] dated {date:prior}[ from {hosp:other}|]",
            "None",
        ),
    ),
)

RAD_SIGNATURE = (
    "[Dictated by|DICTATED BY|Reported by]: {dr:name}[, MD|]\n",
    "[Electronically signed by|Approved by|Attending]: {att:sig} [on|] "
    "{date:today,full}"
    "[ {time}|]\n",
    "[The findings were|Findings] [discussed with|communicated to] {dr} by {att:dr} "
    "[at|@] {time} on {date:today}[ by telephone| ({phone:pager})|]\n",
    "[Images available at|PACS link:] {url}[ (workstation {ip})|]\n",
    "[Resident|Fellow]: {dr:name}\n",
    "[Key images|Images archived]: \\\\PACS01\\[KEY|STUDIES]\\{acc}\n",
)

# --- pathology ---------------------------------------------------------------

PATH_SITES = (
    "colon, sigmoid",
    "stomach, antrum",
    "skin, left forearm",
    "breast, right",
    "prostate, left apex",
    "lymph node, sentinel",
    "liver, mass",
    "lung, right upper lobe",
    "gallbladder",
    "appendix",
    "uterus, cervix and bilateral adnexa",
    "thyroid, left lobe",
    "kidney, left, partial nephrectomy",
    "esophagus, distal",
    "bone marrow, core",
)
PATH_DX = (
    "tubular adenoma",
    "invasive ductal carcinoma, grade {n:1-3}",
    "adenocarcinoma, moderately differentiated",
    "chronic active gastritis, H. pylori organisms identified",
    "basal cell carcinoma, nodular type, margins free",
    "acute appendicitis with periappendicitis",
    "chronic cholecystitis with cholelithiasis",
    "benign prostatic tissue",
    "metastatic carcinoma in {n:1-3} of {n:4-18} lymph nodes",
    "hyperplastic polyp",
    "squamous cell carcinoma in situ",
    "no malignancy identified",
    "follicular adenoma",
    "clear cell renal cell carcinoma, Fuhrman grade {n:1-4}",
    "Barrett esophagus without dysplasia",
    "normocellular marrow with trilineage hematopoiesis",
)

PATH_HEADER = (
    "[SURGICAL PATHOLOGY REPORT|Surgical Pathology|PATHOLOGY REPORT|CYTOPATHOLOGY "
    "REPORT]\n",
    "[{hosp}|Department of Pathology, {hosp}][, {addr:hosp}|]\n",
    "[Accession Number|ACCESSION #|Case #|Accession]: {acc}\n",
    "[Patient|PATIENT|Name]: {pt:header}{hsep}[MRN|MR#|Medical Record #|Unit #]: "
    "{mrn}\n",
    "[DOB|Date of Birth|D.O.B.]: {date:dob,full}[ (Age: {age})| ({age}Y)|]   "
    "[Sex|Gender]: "
    "{sex:letter}\n",
    "[Collected|Date Collected|Procedure Date]: {date:prior,full}{hsep}[Received|"
    "Date Received]: {date:today,full}\n",
    "[Submitting Physician|Surgeon|Requesting MD|Physician]: {dr:name}[, MD|]\n",
    "[Copy to|cc|Additional copies]: {pcp:name}[ (fax {phone:fax})|]\n",
)

PATH_SECTIONS = (
    (
        "[CLINICAL HISTORY|Clinical History|CLINICAL DATA]:",
        (
            "{age} [yo|year old|y/o] {sex} with [a mass|{sx}|{pmh}]",
            "[Hx of|History of] {pmh}[, prior biopsy at {hosp:other} ({acc})|]",
            "[R/O malignancy|Screening|Follow-up of prior {dx}]",
        ),
    ),
    (
        "[GROSS DESCRIPTION|Gross Description|GROSS]:",
        (
            "[The specimen is received|Received|The specimen is] [in formalin|fresh|in "
            "saline], labeled "
            'with the patient\'s name[, "{pt:formal}",| ({pt:formal})| {pt:full}] [and '
            "medical record "
            "number {mrn}|and MRN {mrn}|and date of birth {date:dob,full}], and "
            "designated "
            '"{site}"',
            "It consists of {n:1-12} [tan-pink|tan-white|gray-brown] [soft tissue "
            "fragments|cores|"
            "pieces of tissue] measuring [approximately |~|]{size} [in aggregate|]",
            "[Entirely submitted in cassette A1|Representative sections are submitted "
            "in "
            "A1-A{n:2-9}|Submitted in toto in {n:1-4} cassettes]",
            "The [margin|surface] is inked [black|blue] and the specimen is serially "
            "sectioned",
            "[Cut surface shows|Sectioning reveals] a {size} [firm "
            "white|tan|hemorrhagic] "
            "lesion "
            "located {n:0.1-3.0.1} cm from the [inked|closest] margin",
            "[Dictated by|Grossed by] {dr:init_md}[ on {date:today,short}|]",
        ),
    ),
    (
        "[MICROSCOPIC DESCRIPTION|Microscopic|MICROSCOPIC]:",
        (
            "Sections show [benign colonic mucosa|infiltrating glands in a "
            "desmoplastic "
            "stroma|"
            "sheets of atypical cells|dense chronic inflammation]",
            "[Immunostains|IHC] [for CK7, CK20 and TTF-1|for ER and PR|for p63] [are "
            "performed|"
            "show the expected pattern] with appropriate controls",
            "[No lymphovascular invasion is identified|Lymphovascular invasion is "
            "present]",
            "[Mitoses number {n:1-40} per 10 HPF|Ki-67 index is {n:1-90}%]",
        ),
    ),
    (
        "[DIAGNOSIS|FINAL DIAGNOSIS|Final Diagnosis]:",
        (
            "[A. |]{site}, [biopsy|excision|resection]: {pathdx}",
            "{site}:\n   - {pathdx}",
        ),
    ),
    (
        "[COMMENT|Comment|NOTE]:",
        (
            "[Frozen section diagnosis|Preliminary result] [rendered|called] to {dr} "
            "at "
            "{time} on "
            "{date:today}",
            "[Case reviewed with|Shown to] {dr}, who [agrees|concurs]",
            "[Outside slides from|Prior material from] {hosp:other} ({acc}) "
            "[reviewed|compared]",
            "[Clinical correlation is recommended|Results discussed with {dr} by "
            "telephone "
            "({phone:hosp})]",
            "[Addendum|ADDENDUM] {date:future,full}: [HER2 by FISH is not "
            "amplified|MMR "
            "proteins "
            "intact|Additional levels examined]",
        ),
    ),
)

PATH_SIGNATURE = (
    "[Pathologist|PATHOLOGIST|Attending Pathologist]: {att:sig}[ {lic}|]\n",
    "[Electronically signed out|Signed out|Verified] [on|] {date:today,full} {time}\n",
    "[Resident|Fellow|Pathology Resident]: {dr:name}\n",
    "[Report faxed to|Sent to] {phone:fax} [on|] {date:today,short}[ from workstation "
    "{ip}|]\n",
    "[Questions|Inquiries]: {phone:hosp}[ or {email:dr}|]\n",
)
