//! The countries an invitation's `IsoCode` may name (VS-9a): the ISO 3166-1
//! alpha-2 codes officially assigned (<https://www.iso.org/iso-3166-country-codes.html>),
//! plus `UK`, which the service's document uses for the United Kingdom.

/// Every officially assigned ISO 3166-1 alpha-2 code, sorted (249 codes).
const ASSIGNED: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ \
    BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ \
    CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ \
    DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR \
    GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY \
    HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP \
    KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY \
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ \
    NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY \
    QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ \
    TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ \
    VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// The code the service's document uses for the United Kingdom (ISO: `GB`).
const DOCUMENT_ONLY: &str = "UK";

/// Whether `code` (upper-case) names a country an invitation may go to.
pub(crate) fn is_country(code: &str) -> bool {
    code == DOCUMENT_ONLY || ASSIGNED.split_whitespace().any(|c| c == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_the_assigned_codes_sorted_and_unique() {
        let codes: Vec<&str> = ASSIGNED.split_whitespace().collect();
        assert_eq!(codes.len(), 249);
        assert!(codes.windows(2).all(|w| w[0] < w[1]));
        assert!(
            codes
                .iter()
                .all(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()))
        );
    }

    #[test]
    fn countries_in_and_out() {
        for yes in ["US", "GB", "UK", "IN", "DE", "ZW", "AD"] {
            assert!(is_country(yes), "{yes}");
        }
        // User-assigned (ZZ, XX, AA, QM..QZ), reserved, or never assigned.
        for no in ["ZZ", "XX", "AA", "QZ", "EU", "UN", "us"] {
            assert!(!is_country(no), "{no}");
        }
    }
}
