//! Advantages: how much better a sample did than its baseline.
//!
//! With `rl.group_size` > 1 each served prompt was sampled several times and the baseline
//! is the mean reward of that group (GRPO-style, no std normalisation); otherwise the
//! baseline is the batch mean. A group (or batch) whose rewards are all equal teaches
//! nothing and is dropped.

/// One sample's reward and the group (prompt) it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<'a> {
    pub group: &'a str,
    pub reward: f64,
}

/// Advantage per sample, `None` for samples in a constant-reward group.
pub fn advantages(samples: &[Scored<'_>], group_relative: bool) -> Vec<Option<f64>> {
    let mut out = vec![None; samples.len()];
    let groups: Vec<Vec<usize>> = if group_relative {
        let mut keys: Vec<&str> = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, s) in samples.iter().enumerate() {
            match keys.iter().position(|k| *k == s.group) {
                Some(g) => groups[g].push(i),
                None => {
                    keys.push(s.group);
                    groups.push(vec![i]);
                }
            }
        }
        groups
    } else {
        vec![(0..samples.len()).collect()]
    };
    for members in groups {
        let rewards: Vec<f64> = members.iter().map(|&i| samples[i].reward).collect();
        let first = rewards.first().copied().unwrap_or_default();
        if rewards.iter().all(|r| (r - first).abs() < 1e-9) {
            continue;
        }
        let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
        for &i in &members {
            out[i] = Some(samples[i].reward - mean);
        }
    }
    out
}

/// Per-token advantages for one response: the sample's advantage on every token, minus the
/// OPD reverse-KL estimate `coef · (log p_student − log p_teacher)` where a teacher
/// logprob exists.
pub fn per_token(
    advantage: f64,
    student: &[f32],
    teacher: Option<&[f32]>,
    kl_coef: f64,
) -> Vec<f32> {
    student
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let kl = teacher
                .and_then(|t| t.get(i))
                .map_or(0.0, |&t| kl_coef * (f64::from(s) - f64::from(t)));
            let a = advantage - kl;
            if a.is_finite() { a as f32 } else { 0.0 }
        })
        .collect()
}

/// Mean reverse-KL estimate over tokens with a teacher logprob (for the step metrics).
pub fn mean_kl(student: &[f32], teacher: &[f32]) -> Option<f64> {
    let n = student.len().min(teacher.len());
    (n > 0).then(|| {
        student[..n]
            .iter()
            .zip(&teacher[..n])
            .map(|(s, t)| f64::from(*s) - f64::from(*t))
            .sum::<f64>()
            / n as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(group: &str, reward: f64) -> Scored<'_> {
        Scored { group, reward }
    }

    #[test]
    fn group_relative_uses_the_group_mean_and_drops_constant_groups() {
        let batch = [
            s("a", 1.0),
            s("a", -1.0),
            s("b", 1.0),
            s("b", 1.0),
            s("a", 0.0),
        ];
        let adv = advantages(&batch, true);
        assert_eq!(adv, [Some(1.0), Some(-1.0), None, None, Some(0.0)]);
    }

    #[test]
    fn batch_baseline_without_groups() {
        let batch = [s("a", 1.0), s("b", 0.0), s("c", -1.0), s("d", 0.0)];
        assert_eq!(
            advantages(&batch, false),
            [Some(1.0), Some(0.0), Some(-1.0), Some(0.0)]
        );
        assert_eq!(advantages(&[s("a", 1.0), s("b", 1.0)], false), [None, None]);
        assert!(advantages(&[], false).is_empty());
    }

    #[test]
    fn kl_penalty_is_folded_into_token_advantages() {
        let student = [-1.0, -2.0, -0.5];
        let teacher = [-1.0, -1.0, -1.5];
        let adv = per_token(0.5, &student, Some(&teacher), 2.0);
        assert_eq!(adv, [0.5, 2.5, -1.5]);
        assert_eq!(per_token(1.0, &student, None, 2.0), [1.0, 1.0, 1.0]);
        // A short teacher row only penalises the tokens it covers; NaN never leaks.
        assert_eq!(
            per_token(0.0, &[f32::NAN, -1.0], Some(&[-1.0]), 1.0),
            [0.0, 0.0]
        );
        assert_eq!(mean_kl(&student, &teacher), Some(0.0));
    }
}
